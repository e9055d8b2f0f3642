package protocol

import "fmt"

// GroupAllows reports whether adding a task on an agent with attributes cand
// to tasks already placed on agents with attributes placed keeps the group
// constraint satisfied.
func GroupAllows(c Constraint, placed []Attributes, cand Attributes) bool {
	key := func(a Attributes) (string, bool) {
		v, ok := a[c.Attribute]
		return v.String(), ok
	}
	ck, cok := key(cand)
	switch c.Op {
	case OpUnique:
		if !cok {
			return false
		}
		for _, p := range placed {
			if pk, ok := key(p); ok && pk == ck {
				return false
			}
		}
	case OpSame:
		if !cok {
			return false
		}
		for _, p := range placed {
			if pk, ok := key(p); !ok || pk != ck {
				return false
			}
		}
	case OpMaxPer:
		if !cok {
			return false
		}
		n := 1
		for _, p := range placed {
			if pk, ok := key(p); ok && pk == ck {
				n++
			}
		}
		return n <= c.N
	}
	return true
}

// CheckGroup verifies that placements (one per task) satisfy every hard
// group constraint in cs.
func CheckGroup(cs []Constraint, placements []Attributes) error {
	for _, c := range cs {
		if !c.IsGroup() || c.Soft {
			continue
		}
		for i := range placements {
			if !GroupAllows(c, placements[:i], placements[i]) {
				return fmt.Errorf("%w: task %d violates %s", ErrConstraintViolated, i, c)
			}
		}
	}
	return nil
}
