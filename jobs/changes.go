package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
)

// GroupChange is what a new version of a job does to one group's
// instances, as the runner carries it out: instances of a group the new
// version leaves as it was but for its count are kept, those of a changed
// group are replaced (a service's by its update strategy), and a count
// that grows or shrinks starts or stops the difference.
type GroupChange struct {
	Group                      string
	Start, Stop, Replace, Keep int
}

// String says it in words, e.g. "group web: 2 replaced, 1 started".
func (c GroupChange) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		verb string
	}{{c.Keep, "kept"}, {c.Replace, "replaced"}, {c.Start, "started"}, {c.Stop, "stopped"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing")
	}
	return "group " + c.Group + ": " + strings.Join(parts, ", ")
}

// Changes is what next does to the instances of running (nil: nothing
// runs), group by group: next's groups in its order, then those it drops.
func Changes(running, next *Job) []GroupChange {
	var out []GroupChange
	for _, g := range next.Groups {
		c := GroupChange{Group: g.Name}
		was := groupNamed(running, g.Name)
		switch {
		case was == nil:
			c.Start = g.Count
		default:
			shared := min(was.Count, g.Count)
			if running.Role == next.Role && running.Type == next.Type && SameButCount(*was, g) {
				c.Keep = shared
			} else {
				c.Replace = shared
			}
			c.Start, c.Stop = max(g.Count-was.Count, 0), max(was.Count-g.Count, 0)
		}
		out = append(out, c)
	}
	if running != nil {
		for _, g := range running.Groups {
			if groupNamed(next, g.Name) == nil {
				out = append(out, GroupChange{Group: g.Name, Stop: g.Count})
			}
		}
	}
	return out
}

func groupNamed(j *Job, name string) *Group {
	if j == nil {
		return nil
	}
	for i := range j.Groups {
		if j.Groups[i].Name == name {
			return &j.Groups[i]
		}
	}
	return nil
}

// SameButCount reports whether two versions of a group differ at most in
// their count, so that the instances of one serve as the other's.
func SameButCount(a, b Group) bool {
	a.Count, b.Count = 0, 0
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
