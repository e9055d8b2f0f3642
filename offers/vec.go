package offers

import "github.com/allot-project/allot/protocol"

// vec is a dense vector of scalar resource amounts indexed by the
// allocator's resource registry. Vectors may be shorter than the registry;
// missing entries are zero. add and sub work in place on their receiver
// (and return it, possibly grown): never pass a vector to an operation on
// itself or on something that shares its backing array.
type vec []int64

func (v vec) at(i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// grow returns v extended with zeros to length n.
func (v vec) grow(n int) vec {
	if len(v) >= n {
		return v
	}
	if cap(v) < n {
		return append(v, make(vec, n-len(v))...)
	}
	out := v[:n]
	clear(out[len(v):])
	return out
}

func (v vec) add(o vec) vec {
	v = v.grow(len(o))
	for i, x := range o {
		v[i] += x
	}
	return v
}

func (v vec) sub(o vec) vec {
	v = v.grow(len(o))
	for i, x := range o {
		v[i] -= x
	}
	return v
}

// sameVec reports whether v and o hold the same amounts (missing entries
// are zero).
func sameVec(v, o vec) bool {
	for i := range max(len(v), len(o)) {
		if v.at(i) != o.at(i) {
			return false
		}
	}
	return true
}

// fits reports whether o <= v componentwise.
func (v vec) fits(o vec) bool {
	for i, x := range o {
		if x > v.at(i) {
			return false
		}
	}
	return true
}

func (v vec) isZero() bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func (v vec) clone() vec { return append(vec(nil), v...) }

// registry maps scalar resource names to dense indices, in order of first use.
type registry struct {
	names []string
	index map[string]int
	// device marks the dimensions of GPU devices (devices.go).
	device []bool
}

func newRegistry() *registry { return &registry{index: map[string]int{}} }

// id returns the index of name, registering it when new.
func (r *registry) id(name string) int {
	if i, ok := r.index[name]; ok {
		return i
	}
	r.index[name] = len(r.names)
	r.names = append(r.names, name)
	if _, ok := protocol.GPUIndex(name); ok {
		for len(r.device) < len(r.names) {
			r.device = append(r.device, false)
		}
		r.device[len(r.names)-1] = true
	}
	return len(r.names) - 1
}

// toVec converts the scalars of res, registering unknown names.
func (r *registry) toVec(res protocol.Resources) vec {
	var v vec
	for name, amt := range res.Scalars {
		if amt == 0 {
			continue
		}
		i := r.id(name)
		v = v.grow(i + 1)
		v[i] = amt
	}
	return v
}

// toResources converts v back to named scalars.
func (r *registry) toResources(v vec) protocol.Resources {
	out := protocol.Resources{}
	for i, x := range v {
		if x != 0 {
			if out.Scalars == nil {
				out.Scalars = map[string]int64{}
			}
			out.Scalars[r.names[i]] = x
		}
	}
	return out
}
