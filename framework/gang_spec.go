package framework

import (
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// Defaults of GangSpec fields left zero.
const (
	DefaultGangTimeout = 30 * time.Second
	DefaultGangRefuse  = time.Second
)

// GangSpec describes tasks that must start together, all or none, across
// agents: an MPI job, a parameter-server group.
type GangSpec struct {
	// GroupID names the gang; every task gets it as its GroupID, and each
	// agent's share is one launch group.
	GroupID string
	// Tasks are the gang's tasks, without AgentID; their own hard
	// constraints apply.
	Tasks []protocol.TaskInfo
	// Ports is how many ports each task gets from its agent's offers.
	Ports int
	// Constraints apply to the whole gang: group operators (unique, same,
	// max_per over an attribute) and per-task operators for every task.
	Constraints []protocol.Constraint
	// Timeout is how long one attempt may hold offers without finding a
	// placement (default DefaultGangTimeout). Each attempt's deadline is
	// drawn from [3/4 Timeout, Timeout] so that competing gangs do not
	// give up together.
	Timeout time.Duration
	// Attempts is how many times the gang tries, each with a fresh
	// deadline (default 1; negative: until canceled).
	Attempts int
	// Refuse is the refuse filter on the offers a gang releases when an
	// attempt times out (default DefaultGangRefuse): long enough for
	// someone else to take them.
	Refuse time.Duration
	// Backoff spaces attempts: after a timeout the gang waits Refuse plus
	// Backoff.Delay(attempt) before it tries again, holding nothing and
	// declaring no demand meanwhile. The zero value grows from 100ms to
	// Timeout.
	Backoff Backoff
	// NoDemand stops the gang from declaring its demand; the scheduler
	// then makes sure offers arrive.
	NoDemand bool
	// Prepare, when set, is called once a placement is found and before
	// anything is launched, with the placed tasks in the order of Tasks:
	// AgentID set and the ports given added to their resources. It may
	// change what the tasks run (command, environment, labels), e.g. tell
	// every task where another one listens; it must not change their IDs,
	// agents or resources. It runs on the goroutine that called Offer, and
	// again for a new placement when the first one's offers were stale. When
	// it fails, nothing is launched, Offer returns every offer the gang
	// held, and the gang fails with ErrGangLaunch.
	Prepare func(tasks []protocol.TaskInfo) error
	// Relaunch is how many times a gang that lost a member after it
	// launched is acquired and launched again (negative: without limit).
	// With the default, 0, a gang is done once launched, as the helper
	// leaves its tasks alone from then on. Otherwise the gang watches its
	// members: when one ends other than FINISHED (failed, killed, lost),
	// or the master warns it will preempt or revoke one (a
	// protocol.PreemptionEvent naming it), the whole gang is lost. It
	// kills its other members and acquires and launches all its tasks
	// again, as on its first attempt (Timeout, Attempts and Prepare
	// apply afresh), under new task IDs: "<id>.r<n>" for its n-th
	// relaunch. Once no relaunch is left, a lost gang kills its other
	// members and fails with ErrGangLost.
	Relaunch int
}

func (s GangSpec) validate() error {
	if !protocol.ValidID(s.GroupID) {
		return fmt.Errorf("%w: group id %q", ErrInvalidSpec, s.GroupID)
	}
	if len(s.Tasks) == 0 {
		return fmt.Errorf("%w: gang without tasks", ErrInvalidSpec)
	}
	if s.Timeout < 0 || s.Refuse < 0 || s.Ports < 0 {
		return fmt.Errorf("%w: negative timeout, refuse or ports", ErrInvalidSpec)
	}
	seen := map[protocol.TaskID]bool{}
	for _, t := range s.Tasks {
		if seen[t.TaskID] {
			return fmt.Errorf("%w: task %s twice", ErrInvalidSpec, t.TaskID)
		}
		seen[t.TaskID] = true
		probe := t
		probe.AgentID, probe.GroupID = "agent", s.GroupID
		if err := probe.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
	}
	for _, c := range s.Constraints {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
	}
	return nil
}

// gangShapes are the distinct shapes of the gang's tasks, each with an
// unlimited count.
func gangShapes(spec GangSpec) []protocol.TaskShape {
	common := placement.TaskConstraints(spec.Constraints)
	var out []protocol.TaskShape
	for _, t := range spec.Tasks {
		s := placement.ShapeOf(t, UnlimitedCount)
		s.Ports += spec.Ports
		for _, c := range common {
			if !c.Soft {
				s.Constraints = append(s.Constraints, c)
			}
		}
		if !slices.ContainsFunc(out, func(o protocol.TaskShape) bool { return sameShape(o, s) }) {
			out = append(out, s)
		}
	}
	return out
}

func sameShape(a, b protocol.TaskShape) bool {
	return sameScalars(a.Resources, b.Resources) && a.Ports == b.Ports &&
		slices.EqualFunc(a.Constraints, b.Constraints, func(x, y protocol.Constraint) bool {
			return x.String() == y.String()
		})
}
