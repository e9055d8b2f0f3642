package protocol

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Well-known scalar resource names and their units. Custom names are allowed;
// all scalar amounts are integers in the resource's unit.
const (
	// ResCPUs is CPU in milli-CPUs (1000 = one core).
	ResCPUs = "cpus"
	// ResMem is memory in MiB.
	ResMem = "mem"
	// ResDisk is disk in MiB.
	ResDisk = "disk"
	// ResGPUs is GPU in milli-GPUs (1000 = one device). Asked of an agent
	// with devices (devices.go), less than 1000 is a share of one device
	// and a multiple of 1000 that many whole devices.
	ResGPUs = "gpus"
	// ResPorts is the range resource of TCP/UDP ports.
	ResPorts = "ports"
)

// ValidResourceName reports whether name may name a resource: a lower-case
// letter, then up to 62 lower-case letters, digits, '_', '.' or '-'. It
// is checked for every resource of every message, so by hand rather than
// by a regular expression.
func ValidResourceName(name string) bool {
	if len(name) == 0 || len(name) > 63 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// Resources is a bundle of named scalar amounts and named range sets.
// The zero value is an empty bundle. Methods never mutate their receiver
// unless their name says so (AddInPlace, SubInPlace).
type Resources struct {
	Scalars map[string]int64  `msgpack:"scalars,omitempty" json:"scalars,omitempty"`
	Ranges  map[string]Ranges `msgpack:"ranges,omitempty" json:"ranges,omitempty"`
}

// Scalars builds a Resources holding only the given scalar amounts.
func Scalars(kv map[string]int64) Resources {
	return Resources{Scalars: maps.Clone(kv)}
}

// Clone returns a deep copy.
func (r Resources) Clone() Resources {
	out := Resources{}
	if len(r.Scalars) > 0 {
		out.Scalars = maps.Clone(r.Scalars)
	}
	if len(r.Ranges) > 0 {
		out.Ranges = make(map[string]Ranges, len(r.Ranges))
		for k, v := range r.Ranges {
			out.Ranges[k] = slices.Clone(v)
		}
	}
	return out
}

// Scalar returns the amount of the named scalar (0 when absent).
func (r Resources) Scalar(name string) int64 { return r.Scalars[name] }

// IsEmpty reports whether every scalar is zero and every range set empty.
func (r Resources) IsEmpty() bool {
	for _, v := range r.Scalars {
		if v != 0 {
			return false
		}
	}
	for _, v := range r.Ranges {
		if v.Count() != 0 {
			return false
		}
	}
	return true
}

// Validate checks names and that no amount is negative and every range set
// is well formed.
func (r Resources) Validate() error {
	for k, v := range r.Scalars {
		if !ValidResourceName(k) {
			return fmt.Errorf("%w: resource name %q", ErrInvalidResources, k)
		}
		if v < 0 {
			return fmt.Errorf("%w: %s is negative (%d)", ErrInvalidResources, k, v)
		}
	}
	for k, v := range r.Ranges {
		if !ValidResourceName(k) {
			return fmt.Errorf("%w: resource name %q", ErrInvalidResources, k)
		}
		if _, ok := r.Scalars[k]; ok {
			return fmt.Errorf("%w: %s is both scalar and range", ErrInvalidResources, k)
		}
		if err := v.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidResources, k, err)
		}
	}
	return r.validateDevices()
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	out := r.Clone()
	out.AddInPlace(o)
	return out
}

// AddInPlace adds o to r.
func (r *Resources) AddInPlace(o Resources) {
	for k, v := range o.Scalars {
		if v == 0 {
			continue
		}
		if r.Scalars == nil {
			r.Scalars = map[string]int64{}
		}
		r.Scalars[k] += v
	}
	for k, v := range o.Ranges {
		if len(v) == 0 {
			continue
		}
		if r.Ranges == nil {
			r.Ranges = map[string]Ranges{}
		}
		r.Ranges[k] = r.Ranges[k].Union(v)
	}
}

// Sub returns r - o. Scalars may go negative; ranges lose o's members.
func (r Resources) Sub(o Resources) Resources {
	out := r.Clone()
	out.SubInPlace(o)
	return out
}

// SubInPlace subtracts o from r, dropping zero scalars and empty range sets.
func (r *Resources) SubInPlace(o Resources) {
	for k, v := range o.Scalars {
		if v == 0 {
			continue
		}
		if r.Scalars == nil {
			r.Scalars = map[string]int64{}
		}
		r.Scalars[k] -= v
		if r.Scalars[k] == 0 {
			delete(r.Scalars, k)
		}
	}
	for k, v := range o.Ranges {
		if cur, ok := r.Ranges[k]; ok {
			left := cur.Minus(v)
			if len(left) == 0 {
				delete(r.Ranges, k)
			} else {
				r.Ranges[k] = left
			}
		}
	}
}

// Contains reports whether o fits inside r: every scalar of o is at most
// r's and every range set of o is a subset of r's.
func (r Resources) Contains(o Resources) bool {
	for k, v := range o.Scalars {
		if v > r.Scalars[k] {
			return false
		}
	}
	for k, v := range o.Ranges {
		if !r.Ranges[k].ContainsAll(v) {
			return false
		}
	}
	return true
}

// Equal reports whether r and o hold the same amounts (zero scalars and
// empty range sets count as absent). Negative scalars compare exactly.
func (r Resources) Equal(o Resources) bool {
	for k, v := range r.Scalars {
		if o.Scalars[k] != v {
			return false
		}
	}
	for k, v := range o.Scalars {
		if r.Scalars[k] != v {
			return false
		}
	}
	for k, v := range r.Ranges {
		if !slices.Equal(v.Normalize(), o.Ranges[k].Normalize()) {
			return false
		}
	}
	for k, v := range o.Ranges {
		if !slices.Equal(v.Normalize(), r.Ranges[k].Normalize()) {
			return false
		}
	}
	return true
}

// Names returns the sorted names of all non-zero scalars and non-empty ranges.
func (r Resources) Names() []string {
	var out []string
	for k, v := range r.Scalars {
		if v != 0 {
			out = append(out, k)
		}
	}
	for k, v := range r.Ranges {
		if v.Count() != 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// String renders the bundle deterministically, e.g. "cpus:1000;mem:512;ports:[31000-31001]".
func (r Resources) String() string {
	var b strings.Builder
	for i, k := range r.Names() {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(k)
		b.WriteByte(':')
		if v, ok := r.Scalars[k]; ok && v != 0 {
			b.WriteString(strconv.FormatInt(v, 10))
		} else {
			b.WriteString(r.Ranges[k].String())
		}
	}
	return b.String()
}
