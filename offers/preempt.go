package offers

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Preemption: when a role with pending demand is below its guarantee, or a
// framework below its H-DRF fair share, and what it needs is held by others,
// PlanPreemption chooses the running tasks to take back (docs/preemption.md).
// It is a pure function of the allocator's state, the running tasks the
// caller lists and now; the caller warns the tasks' frameworks, waits out a
// deadline and kills what the next plan still needs.
//
// The rules:
//
//   - A need is a guaranteed role short of its guarantee (policy guarantees
//     or fair) or a framework that could run one more pending task without
//     passing its fair share (fair share over current demand: its own
//     policy fair takes any task; guarantees takes revocable tasks only, the
//     lent resources coming back). A need must last PreemptionConfig.Delay
//     before anything is taken for it.
//   - A need is met, one pending task at a time, from free resources first,
//     then from tasks already warned, and only then by new victims. A
//     guarantee's need still within its delay takes free resources only
//     (a round's guarantee phase hands them to it first).
//   - Victims come from the relatives nearest the need first (siblings
//     before cousins, as the H-DRF walk goes), revocable tasks before
//     others, the most recently started first; on each agent the fewest
//     tasks that make room, and the agent needing the fewest.
//   - A non-revocable task is taken only if every role between its
//     framework and the need (the framework included) keeps at least its
//     guarantee and its fair share of what it runs for sure. Revocable tasks
//     are on loan and carry no such protection. Non-preemptible tasks are
//     never taken, nor, for a need that is no guarantee's, tasks of a role
//     short of its guarantee (a round would give their room back to it).
//   - Room counts only if a round would hand it to the need: within the
//     limits of its roles and the headroom of unmet guarantees. What the
//     headroom lacks, a guarantee's need takes first, from any agent; any
//     other need frees it with its task's room, and takes nothing while
//     the headroom lacks more than that task.
//   - At most PreemptionConfig.MaxFraction of the cluster's capacity of any
//     resource is newly chosen per plan (one task unit's worth always may).

// PreemptionPolicy says what a role's unmet need may take from others.
type PreemptionPolicy string

// Preemption policies.
const (
	// PreemptOff takes nothing back.
	PreemptOff PreemptionPolicy = "off"
	// PreemptGuarantees takes back for guarantees, and revocable resources
	// for fair shares.
	PreemptGuarantees PreemptionPolicy = "guarantees"
	// PreemptFair takes back for guarantees and fair shares.
	PreemptFair PreemptionPolicy = "fair"
)

// ParsePreemptionPolicy parses a policy name.
func ParsePreemptionPolicy(s string) (PreemptionPolicy, error) {
	switch p := PreemptionPolicy(s); p {
	case PreemptOff, PreemptGuarantees, PreemptFair:
		return p, nil
	}
	return "", fmt.Errorf("%w: preemption policy %q (want off, guarantees or fair)", ErrInvalid, s)
}

// PreemptionConfig configures PlanPreemption.
type PreemptionConfig struct {
	// Policy is the policy of roles that set none (default guarantees).
	Policy PreemptionPolicy
	// Delay is how long a need must last before anything is taken for it.
	Delay time.Duration
	// MaxFraction bounds what one plan newly takes, as a fraction of the
	// cluster's capacity of each resource (0 < MaxFraction ≤ 1).
	MaxFraction float64
}

// DefaultPreemption returns the shipped preemption settings.
func DefaultPreemption() PreemptionConfig {
	return PreemptionConfig{Policy: PreemptGuarantees, Delay: 5 * time.Second, MaxFraction: 0.2}
}

// withDefaults fills a zero Policy and MaxFraction.
func (c PreemptionConfig) withDefaults() PreemptionConfig {
	d := DefaultPreemption()
	if c.Policy == "" {
		c.Policy = d.Policy
	}
	if c.MaxFraction == 0 {
		c.MaxFraction = d.MaxFraction
	}
	return c
}

// Validate checks the settings.
func (c PreemptionConfig) Validate() error {
	if _, err := ParsePreemptionPolicy(string(c.Policy)); err != nil {
		return err
	}
	if c.Delay < 0 {
		return fmt.Errorf("%w: negative preemption delay %v", ErrInvalid, c.Delay)
	}
	if !(c.MaxFraction > 0 && c.MaxFraction <= 1) {
		return fmt.Errorf("%w: preemption max fraction %v (want 0 < f ≤ 1)", ErrInvalid, c.MaxFraction)
	}
	return nil
}

// RunningTask is a task holding resources on an agent, as the caller of
// PlanPreemption lists it.
type RunningTask struct {
	FrameworkID protocol.FrameworkID
	TaskID      protocol.TaskID
	AgentID     protocol.AgentID
	Resources   protocol.Resources
	// Revocable tasks run on leftover offers.
	Revocable      bool
	NonPreemptible bool
	StartedAt      time.Time
	// Warned tasks were chosen by an earlier plan and await their deadline.
	Warned bool
}

// Victim is a task a plan takes back.
type Victim struct {
	FrameworkID protocol.FrameworkID
	TaskID      protocol.TaskID
	AgentID     protocol.AgentID
	// Reason is protocol.ReasonRevoked for a revocable task,
	// protocol.ReasonPreempted otherwise.
	Reason string
	// For names the need: "role eng/prod" or "framework f1".
	For string
}

// Need is a role or framework short of what it is entitled to.
type Need struct {
	// For names it: "role eng/prod" (a guarantee) or "framework f1" (a
	// fair share).
	For string
	// Role is the guaranteed role's path, or the framework's role.
	Role      string
	Framework protocol.FrameworkID
	Policy    PreemptionPolicy
	// Short is what it lacks: of its guarantee, or of its fair share.
	Short protocol.Resources
	// Since is when the need was first seen; nothing is taken for it
	// before EligibleAt.
	Since, EligibleAt time.Time
	// Covered is how many of its pending tasks the plan found room for
	// (free, warned or new victims); Blocked reports that it found none
	// for some pending task it is owed.
	Covered int
	Blocked bool
}

// PreemptionPlan is what PlanPreemption decided.
type PreemptionPlan struct {
	// Preempt are tasks newly chosen: warn them.
	Preempt []Victim
	// Keep are warned tasks still needed: kill them at their deadline.
	Keep []Victim
	// Release are warned tasks no longer needed: withdraw their warning.
	Release []Victim
	// Needs are the needs found, eligible or not.
	Needs []Need
}

// preemptState is what the allocator remembers between plans.
type preemptState struct {
	since map[string]time.Time // need key → first seen
	// holds are the room the last plan held for guarantees, by agent
	// (preempt_hold.go).
	holds map[*agent]*holdAt
	view  holdView // the holds as the current round sees them
	bufs  planBufs
	// walkMin, when not 0, replaces the const walkMin; walks counts the
	// last plan's walks (tests).
	walkMin int
	walks   int
}

// PlanPreemption decides what to take back now. Tasks of unknown
// frameworks or agents are ignored.
func (a *Allocator) PlanPreemption(tasks []RunningTask, now time.Time) PreemptionPlan {
	p := newPlanner(a, tasks, now)
	if !p.anyPolicy() {
		a.preempt.since, a.preempt.holds = nil, nil
		return p.finish()
	}
	needs := p.findNeeds()
	for _, n := range needs {
		if now.Before(n.EligibleAt) {
			if n.guarantee {
				// A round hands it free room first, delay or not.
				p.serveFree(n)
			}
			continue
		}
		p.serve(n)
	}
	a.preempt.holds = p.holds
	return p.finish()
}

// SetRolePreemption sets the preemption policy of the role at path
// (created if missing); "" makes it inherit its parent's.
func (a *Allocator) SetRolePreemption(path string, policy PreemptionPolicy) error {
	if path == "" {
		return fmt.Errorf("%w: the root's policy is the cluster's", ErrInvalid)
	}
	if policy != "" {
		if _, err := ParsePreemptionPolicy(string(policy)); err != nil {
			return err
		}
	}
	n, err := a.tree.role(path, true)
	if err != nil {
		return err
	}
	n.preempt = policy
	return nil
}

// policyOf is the policy of the nearest role at or above n that sets one.
func (a *Allocator) policyOf(n *node) PreemptionPolicy {
	for ; n != nil; n = n.parent {
		if n.preempt != "" {
			return n.preempt
		}
	}
	return a.cfg.Preemption.Policy
}

// dom is v's dominant share of the cluster's capacity.
func (a *Allocator) dom(v vec) float64 { return a.shareOf(v) }

// shareEps absorbs float rounding in share comparisons.
const shareEps = 1e-9

// sortVictims orders victims by framework, then task, so plans compare.
func sortVictims(vs []Victim) {
	slices.SortFunc(vs, func(x, y Victim) int {
		return cmp.Or(cmp.Compare(x.FrameworkID, y.FrameworkID), cmp.Compare(x.TaskID, y.TaskID))
	})
}

// depth is the number of ancestors of n.
func depth(n *node) int {
	d := 0
	for p := n.parent; p != nil; p = p.parent {
		d++
	}
	return d
}
