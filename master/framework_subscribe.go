package master

import (
	"context"
	"fmt"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// subscribe registers a new framework, or takes back an existing one that
// subscribes again with its ID (after a reconnect or a master failover):
// it is connected again, and every status update it has not acknowledged
// is sent again.
func (l *leader) subscribe(ctx context.Context, r *protocol.SubscribeRequest) (*protocol.SubscribeReply, error) {
	if err := l.authorizeRole(r); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	id, resubscribe := r.FrameworkID, r.FrameworkID != ""
	var before uint64
	if resubscribe {
		old, ok := l.view().Framework(id)
		if !ok {
			return nil, fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, id)
		}
		before = old.Session
	} else {
		id = protocol.NewFrameworkID()
	}
	// The grace period starts before the commit: a disconnect check that
	// reads the committed framework must find it too, or it would take a
	// framework that has not opened its event stream yet for gone.
	l.mu.Lock()
	l.subscribedAt[id] = time.Unix(0, now)
	l.mu.Unlock()
	res, err := l.apply(ctx, state.CmdRegisterFramework, state.RegisterFramework{
		ID: id, Name: r.Name, Principal: r.Principal, Role: r.Role, Weight: r.Weight,
		FailoverTimeout: r.FailoverTimeout, Capabilities: r.Capabilities, Suppressed: r.Suppressed,
		Resubscribe: resubscribe, Nonce: r.Nonce, Session: r.Session, Instance: r.Instance, User: r.User, Time: now,
	})
	if err != nil {
		return nil, err
	}
	f, _ := res.(*state.Framework)
	if f == nil {
		return nil, fmt.Errorf("%w: register framework returned %T", protocol.ErrInternal, res)
	}
	if f.ID != id {
		// A new registration sent again (same nonce): the framework the
		// first one registered, subscribing again.
		l.mu.Lock()
		delete(l.subscribedAt, id)
		l.mu.Unlock()
		id, resubscribe = f.ID, true
	}
	if resubscribe && before != 0 && f.Session != before {
		// The scheduler that held the framework learns it was taken over
		// from the first event of the new session it sees: the next
		// heartbeat at the latest.
		l.logger.Info("framework taken over by another scheduler", "framework_id", id,
			"session", f.Session, "previous_session", before)
	}
	// RegisterFramework leaves the framework connected, so a resubscription
	// also ends a disconnect and its failover timer.
	l.mu.Lock()
	if _, missing := l.alloc.Usage(id); missing != nil {
		err = l.alloc.AddFramework(offers.FrameworkInfo{ID: id, Role: r.Role, Weight: r.Weight, Suppressed: true})
	} else if err = l.alloc.Suppress(id); err == nil {
		// A scheduler subscribing again may name another role or weight:
		// the allocator follows what was just replicated.
		err = l.alloc.MoveFramework(id, f.Role, f.Weight)
	}
	if err == nil {
		err = l.alloc.SetNoRevocable(id, f.HasCapability(protocol.CapNoRevocable))
	}
	var rescinds []offers.Rescind
	if resubscribe {
		// A framework subscribing again has forgotten the offers it held.
		var held []protocol.OfferID
		for _, o := range l.alloc.Outstanding() {
			if o.FrameworkID == id {
				held = append(held, o.ID)
			}
		}
		rescinds = l.alloc.Rescind(held, "framework subscribed again")
	}
	l.subscribedAt[id] = time.Unix(0, now)
	l.shares.forget(id)
	resumed := false
	if err == nil && r.Resume != nil {
		resumed = l.resumeLocked(id, r)
	} else {
		l.opening[id] = !r.Suppressed
	}
	l.mu.Unlock()
	l.sendRescinds(rescinds)
	if err != nil {
		return nil, err
	}
	if err := l.settleResume(ctx, r, f, resumed); err != nil {
		return nil, err
	}
	l.logger.Info("framework subscribed", "framework_id", id, "role", r.Role, "resubscribe", resubscribe)
	l.frameworkEvent(id, "subscribed")
	l.resendUnacked(id)
	reply := &protocol.SubscribeReply{FrameworkID: id, LeaderID: l.id, HeartbeatInterval: l.cfg.AgentHeartbeat,
		Session: f.Session, Resumed: resumed}
	reply.FilesToken = l.cfg.filesToken(id, time.Now())
	return reply, nil
}

// settleResume follows a subscribe's resume: a round for offers it opened,
// or, when it was not applied, the replicated state brought back to the
// suppression the allocator keeps, so another leader does not open the
// framework's offers either.
func (l *leader) settleResume(ctx context.Context, r *protocol.SubscribeRequest, f *state.Framework, resumed bool) error {
	switch {
	case resumed && !r.Suppressed:
		l.kick()
	case r.Resume != nil && !resumed && !f.Suppressed:
		_, err := l.apply(ctx, state.CmdSetFrameworkSuppressed,
			state.SetFrameworkSuppressed{FrameworkID: f.ID, Suppressed: true})
		return err
	}
	return nil
}

// resumeLocked restores what a subscribe's Resume carries: the demand
// first, then, unless the subscribe is suppressed, the offers open with the
// refusals in force, so no round offers the framework anything its demand
// or its filters would not let through. Such a framework already listens
// on its events, so nothing waits for its first request. A demand the
// allocator refuses leaves the framework suppressed and the resume not
// applied: the driver then declares it by a call of its own, whose error
// it reports, as it did before subscribes carried it. l.mu must be held.
func (l *leader) resumeLocked(id protocol.FrameworkID, r *protocol.SubscribeRequest) bool {
	delete(l.opening, id)
	if d := r.Resume.Demand; d != nil {
		if err := l.alloc.Declare(id, declaration(d)); err != nil {
			l.logger.Warn("subscribe's demand refused; its offers stay closed", "framework_id", id, "error", err)
			return false
		}
		l.shares.declared(id)
	}
	if r.Suppressed {
		return true
	}
	if err := l.reviveLocked(id, r.Resume.Refusals, time.Now()); err != nil {
		l.logger.Warn("subscribe's revive failed; its offers stay closed", "framework_id", id, "error", err)
		_ = l.alloc.Suppress(id)
		return false
	}
	return true
}

// resendUnacked sends a framework, for every task, the oldest status update
// it has not acknowledged yet, so updates survive master failovers and
// reconnects.
func (l *leader) resendUnacked(id protocol.FrameworkID) {
	for _, t := range l.view().UnackedTasks(id) {
		if st, ok := t.Pending(); ok {
			l.publishStatus(st)
		}
	}
}

// admit refuses requests naming a framework the state does not hold, and
// opens the offers of a framework on its first request after subscribing
// (unless it subscribed suppressed): that request shows it now listens on
// its event subject.
func (l *leader) admit(id protocol.FrameworkID) error {
	if _, ok := l.view().Framework(id); !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, id)
	}
	l.mu.Lock()
	open, waiting := l.opening[id]
	delete(l.opening, id)
	var err error
	if waiting && open {
		err = l.alloc.Revive(id)
		l.shares.declared(id)
	}
	l.mu.Unlock()
	if waiting && open {
		l.kick()
	}
	return err
}
