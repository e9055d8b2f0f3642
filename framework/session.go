package framework

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// loop subscribes the framework, then hands queued items to the scheduler
// one at a time, subscribing again whenever an item calls for it, until
// ctx ends. It runs on Run's goroutine: every callback is called from here.
func (d *Driver) loop(ctx context.Context, nc *nats.Conn, inbox chan *nats.Msg, subs *[]*nats.Subscription) error {
	if err := d.subscribe(ctx, nc, inbox, subs); err != nil {
		return err
	}
	for {
		it, ok := d.queue.pop(ctx)
		if !ok {
			return nil
		}
		d.handle(ctx, it)
		d.mu.Lock()
		resub := d.needResub
		d.needResub = false
		d.mu.Unlock()
		if resub {
			if err := d.subscribe(ctx, nc, inbox, subs); err != nil {
				return err
			}
		}
	}
}

// subscribe registers the framework (or registers it again with its ID),
// calls Registered or Reregistered, and restores the framework's soft
// state at the leader. It returns an error only when the framework cannot
// go on; nil when ctx ended.
//
// A framework that has its ID already listens on its events, so its
// subscribe carries its demand and refusals and opens its offers itself
// (SubscribeRequest.Resume): one call, one Raft commit. A new framework
// subscribes suppressed and has its demand declared and offers opened by
// a Revive after it, so that offers follow the declared demand from the
// first one.
func (d *Driver) subscribe(ctx context.Context, nc *nats.Conn, inbox chan *nats.Msg, subs *[]*nats.Subscription) error {
	d.mu.Lock()
	id, moved := d.id, d.leaderMoved
	d.leaderMoved = false
	d.subscribed = false
	first := !d.isReady()
	req := protocol.SubscribeRequest{FrameworkID: id, Name: d.cfg.name, Principal: d.cfg.principal,
		Role: d.cfg.role, FailoverTimeout: d.cfg.failoverTimeout, Capabilities: d.cfg.capabilities,
		Suppressed: true, Weight: d.cfg.weight, Session: d.holds.Load(), Instance: d.instance, User: d.cfg.user}
	if id == "" {
		req.Nonce = d.nonce
	}
	d.mu.Unlock()
	if moved {
		d.voidOffers()
		d.warned.reset()
	}
	var reply protocol.SubscribeReply
	resumed := false
	err := d.withState(ctx, func() error {
		// Read under the state semaphore, as restore does, so the leader
		// ends up with the driver's latest demand and suppression.
		req, resumed = d.withResume(req)
		return d.req.retry(ctx, protocol.VerbSubscribe, req, &reply, nil)
	})
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if id == "" {
		// Only now can the driver listen on its events: the leader gives
		// a new framework a grace period before checking that it does.
		sub, err := d.listenEvents(nc, reply.FrameworkID, inbox)
		if err != nil {
			return err
		}
		*subs = append(*subs, sub)
	}
	d.holds.Store(reply.Session)
	resumed = resumed && reply.Resumed
	d.mu.Lock()
	d.id = reply.FrameworkID
	d.filesToken = reply.FilesToken
	d.subscribed = true
	d.servedBy, d.servedTerm = reply.LeaderID, 0
	if d.announced.ID == reply.LeaderID {
		d.servedTerm = d.announced.Term
	}
	d.heartbeat = reply.HeartbeatInterval
	d.lastBeat = time.Now()
	d.mu.Unlock()
	d.logger.Info("framework subscribed", "framework_id", reply.FrameworkID, "leader_id", reply.LeaderID,
		"resubscribe", !first)
	if first {
		d.readyOnce.Do(func() { close(d.ready) })
		d.sched.Registered(d, reply.FrameworkID)
	} else {
		d.sched.Reregistered(d)
	}
	// A driver resuming a framework reconciles like one coming back.
	d.restore(ctx, !first || d.cfg.frameworkID != "", resumed)
	return nil
}

// withResume adds to a subscribe with a framework ID the demand, the
// suppression and the refusals the driver holds, unless the request would
// then exceed the subscribe's size limit (the restore after it sends
// them); it reports whether it did.
func (d *Driver) withResume(req protocol.SubscribeRequest) (protocol.SubscribeRequest, bool) {
	if req.FrameworkID == "" {
		return req, false
	}
	refusals := d.refusalsInForce()
	d.mu.Lock()
	demand, declared := d.demandRequestLocked()
	suppressed := d.suppressed
	d.mu.Unlock()
	r := req
	r.Suppressed = suppressed
	r.Resume = &protocol.SubscribeResume{Refusals: refusals}
	if declared {
		r.Resume.Demand = &demand
	}
	if b, err := protocol.Encode(protocol.MsgSubscribeRequest, r); err != nil ||
		len(b) > protocol.MaxRequestSize(protocol.MsgSubscribeRequest) {
		return req, false
	}
	return r, true
}

// refusalsInForce returns the driver's decline filters that have not
// expired, for the leader to set again, and forgets the others.
func (d *Driver) refusalsInForce() []protocol.AgentRefusal {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	var out []protocol.AgentRefusal
	for ag, until := range d.refusals {
		if !until.After(now) {
			delete(d.refusals, ag)
			continue
		}
		out = append(out, protocol.AgentRefusal{AgentID: ag, Seconds: until.Sub(now).Seconds()})
	}
	slices.SortFunc(out, func(a, b protocol.AgentRefusal) int { return cmp.Compare(a.AgentID, b.AgentID) })
	if len(out) > protocol.MaxListLen {
		out = out[:protocol.MaxListLen]
	}
	return out
}

// isReady reports whether the first subscribe succeeded.
func (d *Driver) isReady() bool {
	select {
	case <-d.ready:
		return true
	default:
		return false
	}
}

// withState runs f holding the state semaphore (see Driver.stateSem).
func (d *Driver) withState(ctx context.Context, f func() error) error {
	select {
	case d.stateSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.stateSem }()
	return f()
}

// restore declares the framework's demand again and opens offers unless it
// is suppressed (unless the subscribe did both: resumed), and reconciles:
// all tasks (implicitly) when asked, and the tasks of unanswered accepts
// explicitly, since an implicit reconciliation says nothing of tasks the
// master never heard of.
func (d *Driver) restore(ctx context.Context, reconcile, resumed bool) {
	err := d.withState(ctx, func() error {
		d.mu.Lock()
		demand, declared := d.demandRequestLocked()
		suppressed := d.suppressed || resumed
		declared = declared && !resumed
		d.mu.Unlock()
		if declared {
			if err := d.req.retry(ctx, protocol.VerbDemand, demand, nil, nil); err != nil {
				return fmt.Errorf("declare demand: %w", err)
			}
		}
		if !suppressed {
			r := protocol.ReviveRequest{FrameworkID: demand.FrameworkID, Refusals: d.refusalsInForce()}
			if err := d.req.retry(ctx, protocol.VerbRevive, r, nil, nil); err != nil {
				return fmt.Errorf("revive: %w", err)
			}
		}
		return d.reregisterCoflows(ctx, demand.FrameworkID)
	})
	if err == nil && reconcile {
		err = d.reconcile(ctx, nil)
	}
	if err == nil {
		err = d.reconcileUnsettled(ctx)
	}
	if err != nil && ctx.Err() == nil {
		d.checkFatal(err)
		d.logger.Warn("could not restore the framework's state at the leader", "error", err)
		d.sched.Error(d, err)
	}
}

// voidOffers forgets every outstanding offer after a leader change (a new
// leader knows none of its predecessor's offers) and tells the gangs and
// the scheduler.
func (d *Driver) voidOffers() {
	d.mu.Lock()
	ids := make([]protocol.OfferID, 0, len(d.outstanding))
	for id := range d.outstanding {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	for _, id := range sortedOfferIDs(ids) {
		d.rescinded(id)
	}
}

// onLeader handles a leader announcement. Receivers keep the announcement
// with the highest term; a leader other than the one the framework
// subscribed with, or the same node elected again (a later term, with its
// soft state rebuilt), needs a new subscribe.
func (d *Driver) onLeader(ann protocol.LeaderAnnouncement) {
	d.mu.Lock()
	if ann.Term < d.announced.Term {
		d.mu.Unlock()
		return
	}
	d.announced = ann
	moved := false
	switch {
	case ann.ID != d.servedBy:
		moved = true
	case d.servedTerm == 0:
		d.servedTerm = ann.Term
	case ann.Term > d.servedTerm:
		moved = true
	}
	was := d.subscribed
	if moved {
		d.leaderMoved, d.needResub, d.subscribed = true, true, false
	}
	d.mu.Unlock()
	if !moved {
		return
	}
	d.logger.Info("new leader", "leader_id", ann.ID, "term", ann.Term)
	if was {
		d.sched.Disconnected(d)
	}
}

// lost handles a dropped connection or a silent leader: the scheduler is
// told once, and the driver subscribes again when resub is set.
func (d *Driver) lost(reason string, resub bool) {
	d.mu.Lock()
	was := d.subscribed
	d.subscribed = false
	if resub {
		d.needResub = true
	}
	d.mu.Unlock()
	if was {
		d.logger.Warn("framework disconnected", "reason", reason)
		d.sched.Disconnected(d)
	}
}

// watchStatus turns NATS connection changes into queue items.
func (d *Driver) watchStatus(ctx context.Context, ch chan nats.Status) {
	defer d.wg.Done()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-ch:
			if !ok {
				return
			}
			switch s {
			case nats.DISCONNECTED, nats.RECONNECTING:
				if !down {
					down = true
					d.queue.push(item{kind: itemDisconnected})
				}
			case nats.CONNECTED:
				if down {
					down = false
					d.queue.push(item{kind: itemReconnected})
				}
			case nats.CLOSED:
				if ctx.Err() == nil {
					d.fail(fmt.Errorf("%w: the NATS connection closed", ErrClosed))
				}
				return
			}
		}
	}
}

// missedBeats is how many heartbeat intervals may pass without a
// heartbeat, beyond the leader's grace period after a subscribe, before
// the driver subscribes again.
const missedBeats = 5

// watchdog subscribes again when the leader stops sending heartbeats: it
// may have lost leadership unannounced, or removed the framework (the
// subscribe then says so).
func (d *Driver) watchdog(ctx context.Context) {
	defer d.wg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			d.mu.Lock()
			hb := d.heartbeat
			grace := max(time.Second, 2*hb) + missedBeats*hb
			stale := d.subscribed && hb > 0 && now.Sub(d.lastBeat) > grace
			if stale {
				d.lastBeat = now
			}
			d.mu.Unlock()
			if stale {
				d.queue.push(item{kind: itemStale})
			}
		}
	}
}

// isGone reports errors that show the framework is gone for good.
func isGone(err error) bool {
	return errors.Is(err, protocol.ErrUnknownFramework) || errors.Is(err, protocol.ErrFailedOver)
}
