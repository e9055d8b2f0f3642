package master

import (
	"slices"
	"sort"
	"time"

	"github.com/allot-project/allot/protocol"
)

// coflowPush is a priorities command for one agent.
type coflowPush struct {
	agent protocol.AgentID
	cmd   protocol.CoflowPrioritiesCommand
}

// schedule asks the coordinator for its decision and returns the commands
// of the agents whose order changed (an agent left with nothing to send
// gets an empty one), and when to ask again even if nothing happens (the
// slot rotation; zero for never). Each agent's list is its egress: the
// unfinished flows it sends, highest priority first.
func (b *coflowBook) schedule(now time.Time) ([]coflowPush, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.clock(now)
	d, err := b.co.Decide(now)
	if err != nil {
		return nil, time.Time{}
	}
	if d.Epoch == b.decided && !b.flowsChanged {
		// Progress alone moved nothing: the lists stand (reports come
		// after every transfer, so this is the common case).
		return nil, d.NextChange
	}
	b.decided, b.flowsChanged = d.Epoch, false
	lists := map[protocol.AgentID][]protocol.CoflowPriority{}
	for _, g := range d.Grants {
		rec := b.byID[g.Coflow]
		if rec == nil {
			continue
		}
		for _, f := range g.Flows {
			if f < 0 || f >= len(rec.flows) || rec.flows[f].done {
				continue
			}
			spec := rec.flows[f].spec
			l := lists[spec.Src]
			lists[spec.Src] = append(l, protocol.CoflowPriority{FrameworkID: rec.key.fw, CoflowID: rec.key.id,
				Dst: spec.Dst, Rank: len(l), Queue: g.Queue})
		}
	}
	var pushes []coflowPush
	b.epoch++
	for a, l := range lists {
		if prev, ok := b.sent[a]; ok && slices.Equal(prev.Priorities, l) {
			continue
		}
		cmd := protocol.CoflowPrioritiesCommand{Epoch: b.epoch, Priorities: l}
		b.sent[a] = cmd
		pushes = append(pushes, coflowPush{agent: a, cmd: cmd})
	}
	for a := range b.sent {
		if _, ok := lists[a]; !ok {
			delete(b.sent, a)
			pushes = append(pushes, coflowPush{agent: a, cmd: protocol.CoflowPrioritiesCommand{Epoch: b.epoch}})
		}
	}
	sort.Slice(pushes, func(i, j int) bool { return pushes[i].agent < pushes[j].agent })
	return pushes, d.NextChange
}

// current returns the commands last sent to agents that have flows to
// send, to repeat them: a command is fire-and-forget, and an agent that
// restarted has lost it.
func (b *coflowBook) current() []coflowPush {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]coflowPush, 0, len(b.sent))
	for a, cmd := range b.sent {
		out = append(out, coflowPush{agent: a, cmd: cmd})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].agent < out[j].agent })
	return out
}

// coflowView is one coflow as the HTTP API shows it.
type coflowView struct {
	key           coflowKey
	registered    time.Time
	phase         string
	queue         int
	flows, left   int
	bytesSent     int64
	estimatedSize float64
}

// views returns every registered coflow, by framework and ID.
func (b *coflowBook) views() []coflowView {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]coflowView, 0, len(b.coflows))
	for _, rec := range b.coflows {
		v := coflowView{key: rec.key, registered: rec.registered, flows: len(rec.flows), left: rec.left, queue: -1}
		if info, err := b.co.Info(rec.cid); err == nil {
			v.phase, v.queue, v.estimatedSize = info.Phase.String(), info.Queue, info.EstimatedSize
		}
		for _, f := range rec.flows {
			v.bytesSent += f.bytes
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].key.fw != out[j].key.fw {
			return out[i].key.fw < out[j].key.fw
		}
		return out[i].key.id < out[j].key.id
	})
	return out
}

// stats returns the coflows registered and completed.
func (b *coflowBook) stats() (active int, completed uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.coflows), b.completed
}
