package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// pump moves messages from the NATS client into the event queue, decoding
// them on the way. It answers the leader's heartbeats itself, so a busy
// scheduler never looks disconnected.
func (d *Driver) pump(ctx context.Context, inbox chan *nats.Msg) {
	defer d.wg.Done()
	leader := d.subj.Leader()
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-inbox:
			d.receive(msg, leader)
		}
	}
}

func (d *Driver) receive(msg *nats.Msg, leaderSubject string) {
	env, err := protocol.Decode(msg.Data)
	if err != nil {
		d.logger.Warn("undecodable message", "subject", msg.Subject, "error", err)
		return
	}
	body, ok := protocol.NewBody(env.Type)
	if !ok {
		d.logger.Warn("unexpected message type", "subject", msg.Subject, "type", env.Type.String())
		return
	}
	if err := protocol.DecodeBody(env, body); err != nil {
		d.logger.Warn("undecodable message body", "subject", msg.Subject, "type", env.Type.String(), "error", err)
		return
	}
	if msg.Subject == leaderSubject {
		if ann, ok := body.(*protocol.LeaderAnnouncement); ok {
			d.news.heard(ann.Term) // here, not in the queue, which a call may be holding up
			d.queue.push(item{kind: itemLeader, ann: *ann})
		}
		return
	}
	if !d.ownSession(msg) {
		return
	}
	d.mu.Lock()
	d.lastBeat = time.Now()
	d.mu.Unlock()
	if hb, ok := body.(*protocol.HeartbeatEvent); ok {
		if hb.FilesToken != "" {
			d.mu.Lock()
			d.filesToken = hb.FilesToken
			d.mu.Unlock()
		}
		if msg.Reply != "" {
			if err := msg.Respond(nil); err != nil {
				d.logger.Debug("answer heartbeat", "error", err)
			}
		}
		return
	}
	d.queue.push(item{kind: itemEvent, body: body})
}

// ownSession reports whether an event belongs to the session this driver
// holds (protocol.SessionHeader). An event of an older session was sent
// before this driver took the framework over and is dropped; one of a newer
// session means another scheduler took the framework over, which ends Run
// with ErrFailedOver. Events without the header, and every event before the
// first subscribe reply, are taken.
func (d *Driver) ownSession(msg *nats.Msg) bool {
	if msg.Header == nil {
		return true
	}
	s, ok := protocol.ParseSession(msg.Header.Get(protocol.SessionHeader))
	own := d.holds.Load()
	switch {
	case !ok || own == 0 || s == own:
		return true
	case s < own:
		return false
	}
	d.mu.Lock()
	stopping := d.fatal != nil
	d.mu.Unlock()
	if stopping {
		return false
	}
	d.fail(fmt.Errorf("%w: the leader serves session %d of framework %s, this scheduler held session %d",
		protocol.ErrFailedOver, s, d.ID(), own))
	return false
}

// handle acts on one queued item, calling the scheduler as needed.
func (d *Driver) handle(ctx context.Context, it item) {
	switch it.kind {
	case itemLeader:
		d.onLeader(it.ann)
	case itemDisconnected:
		d.lost("nats disconnected", false)
	case itemReconnected:
		d.lost("nats reconnected", true)
	case itemStale:
		d.lost("no heartbeat from the leader", true)
	case itemError:
		d.sched.Error(d, it.err)
	case itemEvent:
		d.onEvent(ctx, it.body)
	}
}

func (d *Driver) onEvent(ctx context.Context, body any) {
	switch ev := body.(type) {
	case *protocol.OffersEvent:
		if len(ev.Offers) == 0 {
			return
		}
		d.mu.Lock()
		for _, o := range ev.Offers {
			d.outstanding[o.ID] = o
		}
		d.mu.Unlock()
		d.logger.Trace("offers", "count", len(ev.Offers))
		d.sched.Offers(d, ev.Offers)
	case *protocol.RescindEvent:
		d.logger.Debug("offer rescinded", "offer_id", ev.OfferID, "reason", ev.Reason)
		d.rescinded(ev.OfferID)
	case *protocol.StatusUpdateEvent:
		d.onStatus(ctx, ev)
	case *protocol.ShareUpdateEvent:
		d.sched.ShareUpdate(d, *ev)
	case *protocol.PreemptionEvent:
		d.onPreemption(*ev)
	case *protocol.AgentLostEvent:
		d.logger.Info("agent lost", "agent_id", ev.AgentID, "state", ev.State)
		if h, ok := d.sched.(AgentLostHandler); ok {
			h.AgentLost(d, *ev)
		}
	case *protocol.ErrorEvent:
		err := ev.Err()
		d.logger.Warn("error event", "error", err)
		if isGone(err) {
			d.checkFatal(err)
			return
		}
		d.sched.Error(d, err)
	default:
		d.logger.Debug("ignored event", "type", typeName(body))
	}
}

// rescinded forgets an offer and tells the gangs and the scheduler.
func (d *Driver) rescinded(id protocol.OfferID) {
	d.mu.Lock()
	_, known := d.outstanding[id]
	delete(d.outstanding, id)
	gangs := d.gangList()
	d.mu.Unlock()
	if !known {
		return
	}
	for _, g := range gangs {
		g.rescind(id)
	}
	d.sched.OfferRescinded(d, id)
}

// gangList returns the registered gangs; d.mu must be held.
func (d *Driver) gangList() []*Gang {
	out := make([]*Gang, 0, len(d.gangs))
	for g := range d.gangs {
		out = append(out, g)
	}
	return out
}

// onStatus delivers a status update, drops duplicates, settles unanswered
// launches, tells the gangs, ends a warning of a task that ended and
// queues the acknowledgement.
func (d *Driver) onStatus(ctx context.Context, ev *protocol.StatusUpdateEvent) {
	st := ev.Status
	uuid := ev.UUID
	if uuid == "" {
		uuid = st.UUID
	}
	st.UUID = uuid
	d.mu.Lock()
	delete(d.unsettled, st.TaskID)
	deliver, reack := true, false
	if uuid != "" {
		deliver, reack = d.seen.observe(uuid, d.cfg.manualAcks)
	}
	d.mu.Unlock()
	ack := protocol.Acknowledgement{AgentID: st.AgentID, TaskID: st.TaskID, UUID: uuid}
	if !deliver {
		d.logger.Trace("duplicate status update", "task_id", st.TaskID, "uuid", uuid)
		if reack {
			d.acks.add(ackEntry{ack: ack})
		}
		return
	}
	if st.State.Terminal() {
		d.warned.forget(st.TaskID)
	}
	d.mu.Lock()
	gangs := d.gangList()
	d.mu.Unlock()
	for _, g := range gangs {
		g.status(st)
	}
	d.sched.StatusUpdate(d, st)
	if uuid != "" && !d.cfg.manualAcks && ctx.Err() == nil {
		d.acks.add(ackEntry{ack: ack})
	}
}

func typeName(body any) string {
	if t, ok := protocol.TypeOf(body); ok {
		return t.String()
	}
	return "unknown"
}

func sortedOfferIDs(ids []protocol.OfferID) []protocol.OfferID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b protocol.OfferID) int { return strings.Compare(string(a), string(b)) })
	return out
}
