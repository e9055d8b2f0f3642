package protocol

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Range is an inclusive interval of integers, e.g. ports 31000-32000.
type Range struct {
	Begin uint64 `msgpack:"b" json:"begin"`
	End   uint64 `msgpack:"e" json:"end"`
}

// Ranges is a set of integers stored as intervals. Operations return
// normalized sets: sorted, non-overlapping and non-adjacent.
type Ranges []Range

// Count returns how many integers the set holds. Intervals whose end precedes
// their begin count as empty; overlapping intervals count twice, so
// normalize first when rs may overlap. The result saturates at math.MaxUint64 (the
// full range [0, MaxUint64] holds 2^64 integers, one more than fits).
func (rs Ranges) Count() uint64 {
	var n uint64
	for _, r := range rs {
		if r.End < r.Begin {
			continue
		}
		size := r.size()
		if n > math.MaxUint64-size {
			return math.MaxUint64
		}
		n += size
	}
	return n
}

// size returns End-Begin+1, saturating at math.MaxUint64. The caller
// ensures End >= Begin.
func (r Range) size() uint64 {
	if r.Begin == 0 && r.End == math.MaxUint64 {
		return math.MaxUint64
	}
	return r.End - r.Begin + 1
}

// Validate rejects intervals whose end precedes their begin.
func (rs Ranges) Validate() error {
	for _, r := range rs {
		if r.End < r.Begin {
			return errors.New("range end before begin")
		}
	}
	return nil
}

// Normalize returns a sorted copy with overlapping and adjacent intervals
// merged. Intervals whose end precedes their begin are empty and dropped.
func (rs Ranges) Normalize() Ranges {
	c := make(Ranges, 0, len(rs))
	for _, r := range rs {
		if r.End >= r.Begin {
			c = append(c, r)
		}
	}
	if len(c) == 0 {
		return nil
	}
	slices.SortFunc(c, func(a, b Range) int {
		switch {
		case a.Begin < b.Begin:
			return -1
		case a.Begin > b.Begin:
			return 1
		}
		return 0
	})
	out := c[:1]
	for _, r := range c[1:] {
		last := &out[len(out)-1]
		if last.End == math.MaxUint64 || r.Begin <= last.End+1 {
			if r.End > last.End {
				last.End = r.End
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// normal reports whether rs is already what Normalize returns: sorted,
// no empty intervals, none overlapping or adjacent.
func (rs Ranges) normal() bool {
	for i, r := range rs {
		if r.End < r.Begin {
			return false
		}
		if i > 0 && (rs[i-1].End == math.MaxUint64 || r.Begin <= rs[i-1].End+1) {
			return false
		}
	}
	return true
}

// normalized returns rs itself when it is normal (clipped, so that an
// append copies it), and a normalized copy otherwise. The set operations
// read their operands through it: the allocator's ranges are normal
// already, and copying them on every offer cost a sort and an allocation.
func (rs Ranges) normalized() Ranges {
	if len(rs) == 0 {
		return nil
	}
	if rs.normal() {
		return slices.Clip(rs)
	}
	return rs.Normalize()
}

// Union returns rs ∪ o, normalized. It may share the backing array of
// one operand when the other is empty; Ranges are never changed in place.
func (rs Ranges) Union(o Ranges) Ranges {
	a, b := rs.normalized(), o.normalized()
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	out := make(Ranges, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var r Range
		if j == len(b) || i < len(a) && a[i].Begin <= b[j].Begin {
			r, i = a[i], i+1
		} else {
			r, j = b[j], j+1
		}
		if n := len(out); n > 0 && (out[n-1].End == math.MaxUint64 || r.Begin <= out[n-1].End+1) {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Minus returns rs \ o.
func (rs Ranges) Minus(o Ranges) Ranges {
	a, b := rs.normalized(), o.normalized()
	if len(b) == 0 {
		return a
	}
	var out Ranges
	j := 0
	for _, r := range a {
		cur := r
		keep := true
		for j < len(b) && b[j].End < cur.Begin {
			j++
		}
		for k := j; k < len(b) && b[k].Begin <= cur.End; k++ {
			if b[k].Begin > cur.Begin {
				out = append(out, Range{cur.Begin, b[k].Begin - 1})
			}
			if b[k].End >= cur.End {
				keep = false
				break
			}
			cur.Begin = b[k].End + 1
		}
		if keep {
			out = append(out, cur)
		}
	}
	return out
}

// ContainsAll reports whether every member of o is in rs.
func (rs Ranges) ContainsAll(o Ranges) bool {
	return len(o.Minus(rs)) == 0
}

// Take returns the n lowest members of rs as a set, or false when rs holds
// fewer than n.
func (rs Ranges) Take(n uint64) (Ranges, bool) {
	if n == 0 {
		return nil, true
	}
	var out Ranges
	for _, r := range rs.normalized() {
		size := r.size()
		if size >= n {
			out = append(out, Range{r.Begin, r.Begin + n - 1})
			return out, true
		}
		out = append(out, r)
		n -= size
	}
	return nil, false
}

// String renders the set as "[a-b,c-d]".
func (rs Ranges) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%d-%d", r.Begin, r.End)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
