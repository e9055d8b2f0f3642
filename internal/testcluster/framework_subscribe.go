package testcluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// resubscribeSoon asks the loop to subscribe again; requests coalesce.
func (f *TestFramework) resubscribeSoon() {
	select {
	case f.resub <- struct{}{}:
	default:
	}
}

// subscribe registers (or re-registers) the framework suppressed, makes
// sure its events subscription exists, declares the remaining demand and
// revives, so offers follow the declared demand from the first one.
func (f *TestFramework) subscribe(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, f.opts.RetryTimeout)
	defer cancel()
	f.mu.Lock()
	id := f.id
	f.mu.Unlock()
	if id == "" {
		// The leader checks that every framework listens on its events
		// subject, and removes one that does not; a new framework can only
		// listen there once the reply tells it its ID. Until then this
		// placeholder answers the check (for every framework; no event can
		// be meant for this one before its next request).
		tmp, err := f.nc.Subscribe(f.subj.FrameworkEventsAll(f.principal), func(*nats.Msg) {})
		if err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		defer func() { _ = tmp.Unsubscribe() }()
		if err := f.nc.Flush(); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
	}
	var reply protocol.SubscribeReply
	err := f.req.Retry(rctx, f.subject(protocol.VerbSubscribe, id), protocol.MsgSubscribeRequest,
		protocol.SubscribeRequest{FrameworkID: id, Name: f.opts.Name, Principal: f.principal, Role: f.opts.Role, Weight: f.opts.Weight,
			FailoverTimeout: f.opts.FailoverTimeout, Capabilities: f.opts.Capabilities, Suppressed: true}, &reply)
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if id == "" {
		subject, err := f.subj.FrameworkEvents(f.principal, reply.FrameworkID)
		if err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		// Events and leader announcements share one channel, so they are
		// handled in the order the server delivered them: offers that follow
		// a new leader's announcement are the new leader's.
		sub, err := f.nc.ChanSubscribe(subject, f.inbox)
		if err != nil {
			return fmt.Errorf("subscribe to events: %w", err)
		}
		lsub, err := f.nc.ChanSubscribe(f.subj.Leader(), f.inbox)
		if err != nil {
			return fmt.Errorf("subscribe to leader announcements: %w", err)
		}
		if err := f.nc.Flush(); err != nil {
			return fmt.Errorf("subscribe to events: %w", err)
		}
		f.mu.Lock()
		f.subs = append(f.subs, sub, lsub)
		f.mu.Unlock()
	}
	f.mu.Lock()
	f.id = reply.FrameworkID
	f.leaderID = reply.LeaderID
	if f.announced.ID != reply.LeaderID {
		f.announced = protocol.LeaderAnnouncement{ID: reply.LeaderID}
	}
	f.subscriptions++
	f.subscribedAt = time.Now()
	demand := slices.Clone(f.demand)
	f.mu.Unlock()
	if len(demand) > 0 {
		if err := f.sendDemand(rctx, demand); err != nil {
			return err
		}
	}
	if err := f.req.Retry(rctx, f.subject(protocol.VerbRevive, reply.FrameworkID), protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: reply.FrameworkID}, nil); err != nil {
		return fmt.Errorf("revive: %w", err)
	}
	if id != "" {
		if err := f.reconcileUnsettled(rctx); err != nil {
			return err
		}
	}
	f.logger.Debug("subscribed", "framework_id", reply.FrameworkID, "leader", reply.LeaderID)
	return nil
}

// reconcileUnsettled asks the leader about tasks whose accept went
// unanswered: it reports those it knows, and LOST for the others.
func (f *TestFramework) reconcileUnsettled(ctx context.Context) error {
	f.mu.Lock()
	var tasks []protocol.ReconcileTask
	for _, id := range f.order {
		if t := f.tasks[id]; t.outcome == AcceptUnknown {
			tasks = append(tasks, protocol.ReconcileTask{TaskID: id, AgentID: t.info.AgentID})
		}
	}
	fw := f.id
	f.mu.Unlock()
	if len(tasks) == 0 {
		return nil
	}
	f.logger.Info("reconciling unanswered launches", "tasks", len(tasks))
	err := f.req.Retry(ctx, f.subject(protocol.VerbReconcile, fw), protocol.MsgReconcileRequest,
		protocol.ReconcileRequest{FrameworkID: fw, Tasks: tasks}, nil)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return nil
}

func (f *TestFramework) sendDemand(ctx context.Context, shapes []protocol.TaskShape) error {
	err := f.req.Retry(ctx, f.subject(protocol.VerbDemand, f.ID()), protocol.MsgDemandRequest,
		protocol.DemandRequest{FrameworkID: f.ID(), Demand: shapes}, nil)
	if err != nil {
		return fmt.Errorf("demand: %w", err)
	}
	return nil
}
