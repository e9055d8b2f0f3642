package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// teardown is a framework's own teardown call: it removes the framework
// (removeFramework).
func (l *leader) teardown(ctx context.Context, id protocol.FrameworkID) error {
	if err := l.admit(id); err != nil {
		return err
	}
	return l.removeFramework(ctx, id)
}

// decline returns offers; without filters the default refuse filter
// applies, except to a leftover decline, which gives the resources to the
// leftover pool and installs a filter only when it names one.
func (l *leader) decline(r *protocol.DeclineRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	refuse := offers.DefaultFilter
	if r.Filters != nil {
		refuse = time.Duration(r.Filters.RefuseSeconds * float64(time.Second))
	}
	decline := l.alloc.Decline
	if r.Leftover {
		decline = l.alloc.DeclineLeftover
	}
	l.mu.Lock()
	err := decline(r.FrameworkID, r.OfferIDs, refuse, time.Now())
	l.mu.Unlock()
	l.kick()
	return err
}

func (l *leader) setSuppressed(ctx context.Context, id protocol.FrameworkID, suppressed bool) error {
	if err := l.admit(id); err != nil {
		return err
	}
	if _, err := l.apply(ctx, state.CmdSetFrameworkSuppressed, state.SetFrameworkSuppressed{FrameworkID: id, Suppressed: suppressed}); err != nil {
		return err
	}
	l.mu.Lock()
	var err error
	if suppressed {
		err = l.alloc.Suppress(id)
	} else {
		err = l.alloc.Revive(id)
		l.shares.declared(id)
	}
	l.mu.Unlock()
	l.kick()
	return err
}

// revive opens offers again, clears the framework's decline filters and
// sets the refusals the request carries (a resubscribing driver's filters
// still in force); a refusal of an agent the leader does not know is
// dropped.
func (l *leader) revive(ctx context.Context, r *protocol.ReviveRequest) error {
	id := r.FrameworkID
	if err := l.admit(id); err != nil {
		return err
	}
	if _, err := l.apply(ctx, state.CmdSetFrameworkSuppressed, state.SetFrameworkSuppressed{FrameworkID: id}); err != nil {
		return err
	}
	l.mu.Lock()
	err := l.reviveLocked(id, r.Refusals, time.Now())
	l.mu.Unlock()
	l.kick()
	return err
}

// reviveLocked opens the framework's offers, clearing its decline filters,
// and sets refusals; l.mu must be held. One step under the lock, so no
// round offers a refused agent between the revive and its refusal.
func (l *leader) reviveLocked(id protocol.FrameworkID, refusals []protocol.AgentRefusal, now time.Time) error {
	err := l.alloc.Revive(id)
	for _, f := range refusals {
		if err != nil {
			break
		}
		d := time.Duration(f.Seconds * float64(time.Second))
		if rerr := l.alloc.RefuseAgent(id, f.AgentID, d, now); rerr != nil && !errors.Is(rerr, offers.ErrUnknownAgent) {
			err = rerr
		}
	}
	l.shares.declared(id)
	return err
}

// kill asks the task's agent to kill it.
func (l *leader) kill(r *protocol.KillRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	t, ok := l.view().Task(r.FrameworkID, r.TaskID)
	if !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownTask, r.TaskID)
	}
	l.sendKill(t.AgentID, r.FrameworkID, r.TaskID, r.GracePeriod)
	return nil
}

func (l *leader) sendKill(agent protocol.AgentID, fw protocol.FrameworkID, task protocol.TaskID, grace time.Duration) {
	l.sendAgent(agent, protocol.MsgKillCommand, protocol.KillCommand{FrameworkID: fw, TaskID: task, GracePeriod: grace})
}

// demand records a framework's pending task shapes for the allocator: the
// fair part (Demand less Optional, and at least MustStart) for the H-DRF
// phase, Optional and RemainingWork for the leftover phase. An empty report
// withdraws the declaration. The report is recorded before admit opens the
// offers of a framework's first request, so no round sees it undeclared.
func (l *leader) demand(r *protocol.DemandRequest) error {
	if _, ok := l.view().Framework(r.FrameworkID); !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, r.FrameworkID)
	}
	l.mu.Lock()
	err := l.alloc.Declare(r.FrameworkID, declaration(r))
	l.shares.declared(r.FrameworkID)
	l.mu.Unlock()
	if aerr := l.admit(r.FrameworkID); err == nil {
		err = aerr
	}
	l.kick()
	return err
}

// declaration is a demand report as the allocator takes it.
func declaration(r *protocol.DemandRequest) offers.Declaration {
	return offers.Declaration{
		Demand:        demands(r.Demand),
		MustStart:     demands(r.MustStart),
		Optional:      demands(r.Optional),
		RemainingWork: r.RemainingWork,
	}
}

func demands(shapes []protocol.TaskShape) []offers.Demand {
	out := make([]offers.Demand, 0, len(shapes))
	for _, s := range shapes {
		out = append(out, offers.Demand{Resources: s.Resources, Ports: s.Ports, Count: s.Count, Constraints: s.Constraints})
	}
	return out
}
