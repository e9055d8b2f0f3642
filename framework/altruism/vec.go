package altruism

import (
	"fmt"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// vec is a dense vector of scalar amounts indexed by a job's dimensions
// (Job.dims). Planning works on vec because a map lookup per resource in the
// inner loops of the packers would dominate the cost of a plan.
type vec []int64

// dense converts the scalars of r named in dims into a vec.
func dense(dims []string, r protocol.Resources) vec {
	v := make(vec, len(dims))
	for i, name := range dims {
		v[i] = r.Scalars[name]
	}
	return v
}

// fitsIn reports whether v + extra ≤ limit in every dimension.
func (v vec) fitsIn(extra, limit vec) bool {
	for i, x := range v {
		if x+extra[i] > limit[i] {
			return false
		}
	}
	return true
}

// addScaled adds k·o to v in place.
func (v vec) addScaled(o vec, k int64) {
	for i, x := range o {
		v[i] += k * x
	}
}

// exceeds reports whether v > limit in some dimension.
func (v vec) exceeds(limit vec) bool {
	for i, x := range v {
		if x > limit[i] {
			return true
		}
	}
	return false
}

// alignment is the Tetris alignment score of a demand against the free
// capacity of a bin holding used out of capacity: Σ_r (need_r/cap_r) ·
// (free_r/cap_r), with invCap2[r] = 1/cap_r². It only ranks candidates, so
// float rounding cannot make a plan infeasible.
func alignment(need, used, capacity vec, invCap2 []float64) float64 {
	s := 0.0
	for r, x := range need {
		s += float64(x) * float64(capacity[r]-used[r]) * invCap2[r]
	}
	return s
}

// scalarNames returns the sorted names of r's scalars.
func scalarNames(r protocol.Resources) []string {
	names := make([]string, 0, len(r.Scalars))
	for k := range r.Scalars {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// checkScalars validates r as a demand or share: valid names, no negative
// amount and, when noRanges is set, no range resources.
func checkScalars(r protocol.Resources, noRanges bool) error {
	for _, name := range scalarNames(r) {
		if !protocol.ValidResourceName(name) {
			return fmt.Errorf("resource name %q", name)
		}
		if v := r.Scalars[name]; v < 0 {
			return fmt.Errorf("%s is negative (%d)", name, v)
		}
	}
	if noRanges {
		for name, rg := range r.Ranges {
			if rg.Count() != 0 {
				return fmt.Errorf("range resource %q is not planned", name)
			}
		}
	}
	return nil
}

// scalarsOnly returns a copy of r's non-zero scalars.
func scalarsOnly(r protocol.Resources) protocol.Resources {
	out := protocol.Resources{}
	for k, v := range r.Scalars {
		if v == 0 {
			continue
		}
		if out.Scalars == nil {
			out.Scalars = make(map[string]int64, len(r.Scalars))
		}
		out.Scalars[k] = v
	}
	return out
}
