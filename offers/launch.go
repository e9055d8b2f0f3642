package offers

import (
	"fmt"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Launch is one accept as the leader receives it: tasks on a framework's
// offers, each naming the agent it is for, and the accept's filter for
// what it leaves unused.
type Launch struct {
	Framework protocol.FrameworkID
	Offers    []protocol.OfferID
	Tasks     []LaunchTask
	// RefuseRemainder keeps the offers' agent from the framework this long
	// when the tasks leave part of the offers unused, as an accept's
	// filters do in Mesos; zero offers the remainder again at once.
	RefuseRemainder time.Duration
}

// LaunchTask is one task of a Launch.
type LaunchTask struct {
	ID             protocol.TaskID
	Agent          protocol.AgentID
	Resources      protocol.Resources
	NonPreemptible bool
}

// Launch makes one accept whole or not at all, in one call: every task
// names the offers' agent, no non-preemptible task goes on a revocable
// (leftover) offer, the tasks fit the offers as AcceptTasks checks; then,
// when the tasks left part of the offers unused, the agent is filtered
// from the framework for RefuseRemainder. Accepted.Made is when the first
// offer was made. On error nothing changes.
func (a *Allocator) Launch(req Launch, now time.Time) (Accepted, error) {
	if len(req.Offers) == 0 {
		return Accepted{}, fmt.Errorf("%w: an accept names no offer", ErrInvalid)
	}
	first, ok := a.Offer(req.Offers[0])
	if ok && first.FrameworkID == req.Framework {
		// Only a framework's own offer says where its tasks must go;
		// AcceptTasks refuses the rest without telling whose they are.
		for _, t := range req.Tasks {
			if t.Agent != first.AgentID {
				return Accepted{}, fmt.Errorf("%w: task %s names agent %s, the offers are on %s",
					ErrOfferMismatch, t.ID, t.Agent, first.AgentID)
			}
		}
		if err := a.noPinnedOnLeftover(req); err != nil {
			return Accepted{}, err
		}
	}
	res := make([]protocol.Resources, len(req.Tasks))
	for i, t := range req.Tasks {
		res[i] = t.Resources
	}
	acc, err := a.AcceptTasks(req.Framework, req.Offers, res, now)
	if err != nil {
		return Accepted{}, err
	}
	acc.Made = first.Made
	if acc.Remainder && req.RefuseRemainder > 0 {
		// The accept succeeded; its filter is best effort, and cannot fail
		// for a framework and agent the accept just used.
		_ = a.RefuseAgent(req.Framework, acc.Agent, req.RefuseRemainder, now)
	}
	return acc, nil
}

// noPinnedOnLeftover refuses a non-preemptible task on revocable offers:
// the lender may take those back.
func (a *Allocator) noPinnedOnLeftover(req Launch) error {
	for _, t := range req.Tasks {
		if !t.NonPreemptible {
			continue
		}
		for _, id := range req.Offers {
			if o, ok := a.Offer(id); ok && o.Kind == KindLeftover {
				return fmt.Errorf("%w: task %s: a non-preemptible task cannot run on revocable (leftover) offer %s",
					protocol.ErrNotPreemptible, t.ID, id)
			}
		}
	}
	return nil
}
