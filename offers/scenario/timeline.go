package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// A scenario's timeline: leaves that arrive after the start, tasks that run
// for a while, role guarantees and preemption. Replay plays it; Fill and
// Churn ignore it (leaves arriving later are simply absent).

// Preemption configures the preemption a replay runs, as the master's
// leader does (docs/hdrf.md, "Preemption replays").
type Preemption struct {
	// Policy is the cluster's policy: off, guarantees or fair.
	Policy offers.PreemptionPolicy
	// Interval is the time between two preemption decisions (> 0).
	Interval time.Duration
	// Delay is how long a need must last before anything is taken for it.
	Delay time.Duration
	// Deadline is the warning a task gets before it is killed.
	Deadline time.Duration
	// MaxFraction bounds what one decision newly takes, as a fraction of
	// the cluster's capacity of each resource (0 < MaxFraction ≤ 1).
	MaxFraction float64
}

// DefaultPreemption returns the settings `allot master` runs with.
func DefaultPreemption() Preemption {
	d := offers.DefaultPreemption()
	return Preemption{Policy: d.Policy, Interval: time.Second, Delay: d.Delay, Deadline: 30 * time.Second,
		MaxFraction: d.MaxFraction}
}

// FieldError reports a scenario field with a value that cannot be
// replayed. It wraps protocol.ErrInvalidArgument.
type FieldError struct {
	// Node names the node the field belongs to ("" for a field of the
	// whole scenario).
	Node string
	// Field is the field's name in the scenario file, such as
	// "preemption.deadline" or "guarantee".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Node != "" {
		return fmt.Sprintf("scenario: node %q: %s: %s", e.Node, e.Field, e.Reason)
	}
	return fmt.Sprintf("scenario: %s: %s", e.Field, e.Reason)
}

// Unwrap returns protocol.ErrInvalidArgument.
func (e *FieldError) Unwrap() error { return protocol.ErrInvalidArgument }

func (p Preemption) validate() error {
	if _, err := offers.ParsePreemptionPolicy(string(p.Policy)); err != nil {
		return &FieldError{Field: "preemption.policy", Reason: fmt.Sprintf("unknown policy %q (want off, guarantees or fair)", p.Policy)}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"delay", p.Delay}, {"deadline", p.Deadline}} {
		if d.v < 0 {
			return &FieldError{Field: "preemption." + d.name, Reason: fmt.Sprintf("must not be negative, got %v", d.v)}
		}
	}
	if p.Interval <= 0 {
		return &FieldError{Field: "preemption.interval", Reason: fmt.Sprintf("must be positive, got %v", p.Interval)}
	}
	if !(p.MaxFraction > 0 && p.MaxFraction <= 1) {
		return &FieldError{Field: "preemption.max_fraction", Reason: fmt.Sprintf("want 0 < f ≤ 1, got %v", p.MaxFraction)}
	}
	return nil
}

// allocator is the part of p the allocator's planner takes.
func (p Preemption) allocator() offers.PreemptionConfig {
	return offers.PreemptionConfig{Policy: p.Policy, Delay: p.Delay, MaxFraction: p.MaxFraction}
}

// Timed reports whether the spec has a timeline, which only Replay plays.
func (s Spec) Timed() bool {
	return s.Preemption != nil || s.Until > 0 || nodeTimed(s.Root)
}

func nodeTimed(n Node) bool {
	if n.Arrival != 0 || n.Duration != 0 || len(n.Guarantee) > 0 || n.Preemption != "" {
		return true
	}
	return slices.ContainsFunc(n.Children, nodeTimed)
}

// arrival is something that happens at a later time: a leaf's framework
// joins, or a role's guarantee takes effect.
type arrival struct {
	at time.Duration
	// leaf joins with weight, or the guarantee of the role at path
	// guarantee starts.
	leaf      string
	weight    float64
	guarantee string
}

// sortArrivals orders arrivals by time, a guarantee before the leaves
// arriving with it, then in tree order.
func (r *Run) sortArrivals() {
	slices.SortStableFunc(r.arrivals, func(x, y arrival) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.rank(), y.rank()))
	})
}

// rank puts a guarantee (0) before a leaf (1).
func (a arrival) rank() int {
	if a.guarantee != "" {
		return 0
	}
	return 1
}

// addRoleTimeline checks a role's timeline fields and applies its policy
// and guarantee, or schedules the guarantee for the first arrival under it.
func (r *Run) addRoleTimeline(n Node, path string) error {
	r.nodes[path] = &n
	if n.Arrival != 0 || n.Duration != 0 {
		field := "arrival"
		if n.Duration != 0 {
			field = "duration"
		}
		return &FieldError{Node: n.Name, Field: field, Reason: "only a leaf has one"}
	}
	if n.Preemption != "" {
		if _, err := offers.ParsePreemptionPolicy(string(n.Preemption)); err != nil {
			return &FieldError{Node: n.Name, Field: "preemption",
				Reason: fmt.Sprintf("unknown policy %q (want off, guarantees or fair)", n.Preemption)}
		}
		if err := r.Alloc.SetRolePreemption(path, n.Preemption); err != nil {
			return err
		}
	}
	if len(n.Guarantee) == 0 {
		return nil
	}
	for name, v := range n.Guarantee {
		if _, ok := r.spec.Capacity[name]; !ok {
			return &FieldError{Node: n.Name, Field: "guarantee", Reason: fmt.Sprintf("unknown resource %q", name)}
		}
		if v < 0 {
			return &FieldError{Node: n.Name, Field: "guarantee", Reason: fmt.Sprintf("negative %s=%d", name, v)}
		}
	}
	if at := firstArrival(n); at > 0 {
		r.arrivals = append(r.arrivals, arrival{at: at, guarantee: path})
		return nil
	}
	return r.Alloc.SetRoleGuarantee(path, protocol.Scalars(n.Guarantee))
}

// checkLeafTimeline checks a leaf's timeline fields.
func checkLeafTimeline(n Node) error {
	switch {
	case n.Arrival < 0:
		return &FieldError{Node: n.Name, Field: "arrival", Reason: fmt.Sprintf("must not be negative, got %v", n.Arrival)}
	case n.Duration < 0:
		return &FieldError{Node: n.Name, Field: "duration", Reason: fmt.Sprintf("must not be negative, got %v", n.Duration)}
	case len(n.Guarantee) > 0:
		return &FieldError{Node: n.Name, Field: "guarantee", Reason: "a leaf takes none; set it on its role"}
	case n.Preemption != "":
		return &FieldError{Node: n.Name, Field: "preemption", Reason: "a leaf takes none; set it on its role"}
	}
	return nil
}

// checkRootTimeline refuses timeline fields on the root, which is the
// cluster.
func checkRootTimeline(n Node) error {
	switch {
	case len(n.Guarantee) > 0:
		return &FieldError{Node: n.Name, Field: "guarantee", Reason: "the root takes none"}
	case n.Preemption != "":
		return &FieldError{Node: n.Name, Field: "preemption", Reason: "the root's policy is preemption.policy"}
	case n.Arrival != 0:
		return &FieldError{Node: n.Name, Field: "arrival", Reason: "only a leaf has one"}
	case n.Duration != 0:
		return &FieldError{Node: n.Name, Field: "duration", Reason: "only a leaf has one"}
	}
	return nil
}

// firstArrival is the earliest arrival of a leaf under n.
func firstArrival(n Node) time.Duration {
	if len(n.Children) == 0 {
		return n.Arrival
	}
	first := time.Duration(-1)
	for _, c := range n.Children {
		if a := firstArrival(c); first < 0 || a < first {
			first = a
		}
	}
	return first
}
