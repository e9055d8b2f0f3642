package coflowbook

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/protocol"
)

// Push is a priorities command for one agent.
type Push struct {
	Agent protocol.AgentID
	Cmd   protocol.CoflowPrioritiesCommand
}

// schedule asks the coordinator for its decision and returns the commands
// of the agents whose order changed (an agent left with nothing to send
// or receive gets an empty one), and when to ask again even if nothing
// happens (the slot rotation; zero for never). Each agent's command lists
// its egress (the unfinished flows it sends) and its ingress (those it
// receives), highest priority first.
func (b *Book) Schedule(now time.Time) ([]Push, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.clock(now)
	d, err := b.co.Decide(now)
	if err != nil {
		return nil, time.Time{}
	}
	if d.Epoch == b.decided && !b.rebuild {
		// Under the same decision only finished flows change the lists:
		// reports come after every transfer, so this is the common case.
		return b.dropFinished(), d.NextChange
	}
	b.decided, b.rebuild, b.finished = d.Epoch, false, b.finished[:0]
	egress, ingress := b.portLists(d)
	var pushes []Push
	b.epoch++
	for p := range egress {
		if len(egress[p]) == 0 && len(ingress[p]) == 0 {
			continue
		}
		a := b.agents[p]
		if prev, ok := b.sent[a]; ok && slices.Equal(prev.Priorities, egress[p]) && slices.Equal(prev.Ingress, ingress[p]) {
			continue
		}
		cmd := protocol.CoflowPrioritiesCommand{Epoch: b.epoch, Priorities: egress[p], Ingress: ingress[p]}
		b.sent[a] = cmd
		pushes = append(pushes, Push{Agent: a, Cmd: cmd})
	}
	for a := range b.sent {
		if p, ok := b.ports[a]; !ok || len(egress[p]) == 0 && len(ingress[p]) == 0 {
			delete(b.sent, a)
			pushes = append(pushes, Push{Agent: a, Cmd: protocol.CoflowPrioritiesCommand{Epoch: b.epoch}})
		}
	}
	return byAgent(pushes), d.NextChange
}

// portLists returns every port's lists under decision d: the unfinished
// flows it sends (egress, entries naming Dst) and receives (ingress,
// entries naming Src), in the decision's order, ranked. Two passes, so
// that each list is allocated once at its size.
func (b *Book) portLists(d *coflow.Decision) (egress, ingress [][]protocol.CoflowPriority) {
	nOut, nIn := make([]int, coflowPorts), make([]int, coflowPorts)
	each := func(visit func(rec *coflowRec, g *coflow.Grant, f int)) {
		for gi := range d.Grants {
			g := &d.Grants[gi]
			rec := b.byID[g.Coflow]
			if rec == nil {
				continue
			}
			for _, f := range g.Flows {
				if f >= 0 && f < len(rec.flows) && !rec.flows[f].done {
					visit(rec, g, f)
				}
			}
		}
	}
	each(func(_ *coflowRec, g *coflow.Grant, f int) { nOut[g.Links[f].Src]++; nIn[g.Links[f].Dst]++ })
	egress, ingress = make([][]protocol.CoflowPriority, coflowPorts), make([][]protocol.CoflowPriority, coflowPorts)
	add := func(lists [][]protocol.CoflowPriority, n []int, p coflow.Port, e protocol.CoflowPriority) {
		if lists[p] == nil {
			lists[p] = make([]protocol.CoflowPriority, 0, n[p])
		}
		e.Rank = len(lists[p])
		lists[p] = append(lists[p], e)
	}
	each(func(rec *coflowRec, g *coflow.Grant, f int) {
		spec := rec.flows[f].spec
		e := protocol.CoflowPriority{FrameworkID: rec.key.fw, CoflowID: rec.key.id, Queue: g.Queue}
		out, in := e, e
		out.Dst, in.Src = spec.Dst, spec.Src
		add(egress, nOut, g.Links[f].Src, out)
		add(ingress, nIn, g.Links[f].Dst, in)
	})
	return egress, ingress
}

// dropFinished takes the flows finished since the last schedule out of
// their senders' and receivers' lists and returns the commands of the
// agents whose lists changed. Lists that were sent are never modified: a
// command may still be on its way out.
func (b *Book) dropFinished() []Push {
	if len(b.finished) == 0 {
		return nil
	}
	changed := map[protocol.AgentID]bool{}
	for _, f := range b.finished {
		if cmd, ok := b.sent[f.src]; ok {
			if l, ok := without(cmd.Priorities, f.key, func(p protocol.CoflowPriority) bool { return p.Dst == f.dst }); ok {
				cmd.Priorities = l
				b.sent[f.src], changed[f.src] = cmd, true
			}
		}
		if cmd, ok := b.sent[f.dst]; ok {
			if l, ok := without(cmd.Ingress, f.key, func(p protocol.CoflowPriority) bool { return p.Src == f.src }); ok {
				cmd.Ingress = l
				b.sent[f.dst], changed[f.dst] = cmd, true
			}
		}
	}
	b.finished = b.finished[:0]
	if len(changed) == 0 {
		return nil
	}
	b.epoch++
	pushes := make([]Push, 0, len(changed))
	for a := range changed {
		cmd := b.sent[a]
		cmd.Epoch = b.epoch
		if len(cmd.Priorities) == 0 && len(cmd.Ingress) == 0 {
			delete(b.sent, a) // nothing left to repeat
		} else {
			b.sent[a] = cmd
		}
		pushes = append(pushes, Push{Agent: a, Cmd: cmd})
	}
	return byAgent(pushes)
}

// without returns a copy of list without coflow key's entry that other
// picks, ranks renumbered, and whether there was one.
func without(list []protocol.CoflowPriority, key coflowKey, other func(protocol.CoflowPriority) bool) ([]protocol.CoflowPriority, bool) {
	i := slices.IndexFunc(list, func(p protocol.CoflowPriority) bool {
		return p.FrameworkID == key.fw && p.CoflowID == key.id && other(p)
	})
	if i < 0 {
		return list, false
	}
	l := slices.Concat(list[:i], list[i+1:])
	for j := i; j < len(l); j++ {
		l[j].Rank = j
	}
	return l, true
}

// current returns the commands last sent to agents that have flows to
// send, to repeat them: a command is fire-and-forget, and an agent that
// restarted has lost it.
func (b *Book) Current() []Push {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Push, 0, len(b.sent))
	for a, cmd := range b.sent {
		out = append(out, Push{Agent: a, Cmd: cmd})
	}
	return byAgent(out)
}

// byAgent sorts pushes by agent, so agents are told in a fixed order.
func byAgent(pushes []Push) []Push {
	slices.SortFunc(pushes, func(a, b Push) int { return cmp.Compare(a.Agent, b.Agent) })
	return pushes
}

// View is one coflow as the HTTP API shows it.
type View struct {
	FrameworkID   protocol.FrameworkID
	CoflowID      string
	Registered    time.Time
	Phase         string
	Queue         int
	Flows, Left   int
	BytesSent     int64
	EstimatedSize float64
}

// views returns every registered coflow, by framework and ID.
func (b *Book) Views() []View {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]View, 0, len(b.coflows))
	for _, rec := range b.coflows {
		v := View{FrameworkID: rec.key.fw, CoflowID: rec.key.id, Registered: rec.registered, Flows: len(rec.flows), Left: rec.left, Queue: -1}
		if info, err := b.co.Info(rec.cid); err == nil {
			v.Phase, v.Queue, v.EstimatedSize = info.Phase.String(), info.Queue, info.EstimatedSize
		}
		for _, f := range rec.flows {
			v.BytesSent += f.bytes
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].FrameworkID != out[j].FrameworkID {
			return out[i].FrameworkID < out[j].FrameworkID
		}
		return out[i].CoflowID < out[j].CoflowID
	})
	return out
}

// stats returns the coflows registered and completed.
func (b *Book) Stats() (active int, completed uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.coflows), b.completed
}
