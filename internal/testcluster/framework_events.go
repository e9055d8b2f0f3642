package testcluster

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// inboxSize bounds the events and announcements waiting to be handled.
const inboxSize = 1 << 16

// receive handles events and leader announcements in arrival order.
func (f *TestFramework) receive(ctx context.Context) {
	defer f.wg.Done()
	leader := f.subj.Leader()
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-f.inbox:
			if msg.Subject == leader {
				f.onLeader(msg)
			} else {
				f.onEvent(ctx, msg)
			}
		}
	}
}

// loop re-subscribes after leader announcements and launches on offers.
func (f *TestFramework) loop(ctx context.Context) {
	defer f.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.resub:
			if err := f.subscribe(ctx); err != nil && ctx.Err() == nil {
				f.logger.Error("re-subscribe", "error", err)
			}
		case <-f.wake:
			f.autoLaunch(ctx)
		}
	}
}

func (f *TestFramework) onLeader(msg *nats.Msg) {
	var ann protocol.LeaderAnnouncement
	env, err := protocol.Decode(msg.Data)
	if err == nil {
		err = protocol.DecodeBody(env, &ann)
	}
	if err != nil {
		f.logger.Error("bad leader announcement", "error", err)
		return
	}
	// Leaders announce themselves periodically; only a new one (another
	// node, or a later term) needs the framework to subscribe again. Offers
	// of the earlier leader died with it. The subscribe reply names the
	// leader but not its term: the first announcement of that leader gives
	// the term, as the SDK's driver does, rather than a resubscribe.
	f.mu.Lock()
	same := ann.ID == f.announced.ID && (f.announced.Term == 0 || ann.Term <= f.announced.Term)
	if same && f.announced.Term == 0 {
		f.announced.Term = ann.Term
	}
	if !same {
		f.announced = ann
		clear(f.outstanding)
	}
	f.mu.Unlock()
	if same {
		return
	}
	f.logger.Debug("new leader announced", "leader", ann.ID, "term", ann.Term)
	f.resubscribeSoon()
}

func (f *TestFramework) onEvent(ctx context.Context, msg *nats.Msg) {
	env, err := protocol.Decode(msg.Data)
	if err != nil {
		f.logger.Error("bad event", "error", err)
		return
	}
	body, _ := protocol.NewBody(env.Type)
	if err := protocol.DecodeBody(env, body); err != nil {
		f.logger.Error("bad event body", "type", env.Type.String(), "error", err)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch ev := body.(type) {
	case *protocol.OffersEvent:
		for _, o := range ev.Offers {
			f.logger.Trace("offer", "offer_id", o.ID, "agent_id", o.AgentID, "cpus", o.Resources.Scalar(protocol.ResCPUs))
			f.outstanding[o.ID] = o
			f.offersSeen = append(f.offersSeen, o)
		}
		if f.opts.AutoLaunch != nil {
			f.offerQueue = append(f.offerQueue, ev.Offers...)
			select {
			case f.wake <- struct{}{}:
			default:
			}
		}
	case *protocol.RescindEvent:
		delete(f.outstanding, ev.OfferID)
		f.rescinds = append(f.rescinds, *ev)
	case *protocol.StatusUpdateEvent:
		f.statusLocked(ctx, ev)
	case *protocol.ErrorEvent:
		f.errorEvents = append(f.errorEvents, *ev)
	case *protocol.PreemptionEvent:
		f.preemptions = append(f.preemptions, *ev)
	}
}

// statusLocked records a status update and acknowledges it.
func (f *TestFramework) statusLocked(ctx context.Context, ev *protocol.StatusUpdateEvent) {
	st := ev.Status
	if st.UUID == "" {
		st.UUID = ev.UUID
	}
	t, ok := f.tasks[st.TaskID]
	if !ok {
		t = &fwTask{info: protocol.TaskInfo{TaskID: st.TaskID, AgentID: st.AgentID}, outcome: AcceptUnknown}
		f.tasks[st.TaskID] = t
		f.order = append(f.order, st.TaskID)
	}
	if t.outcome == AcceptUnknown {
		if st.State == protocol.TaskLost && (st.Reason == protocol.ReasonReconciliation || st.Reason == protocol.ReasonTaskUnknown) {
			// Reconciliation: the leader never committed the launch.
			t.outcome = AcceptRefused
		} else if st.UUID == "" && (st.State == protocol.TaskError || st.Reason == protocol.ReasonInvalidOffers) {
			// The leader refused the accept (it sends TASK_ERROR, or
			// TASK_DROPPED or TASK_LOST for stale offers, with no update
			// UUID, besides the error reply).
			t.outcome = AcceptRefused
		} else {
			// An unanswered accept did commit after all.
			t.outcome = AcceptOK
			f.countLaunchLocked(t.info)
		}
	}
	t.statuses = append(t.statuses, st)
	if ev.UUID == "" || f.closed {
		return
	}
	f.pendingAcks++
	f.ackQueue = append(f.ackQueue, protocol.Acknowledgement{AgentID: st.AgentID, TaskID: st.TaskID, UUID: ev.UUID})
	select {
	case f.ackWake <- struct{}{}:
	default:
	}
}
