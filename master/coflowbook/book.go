package coflowbook

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/protocol"
)

// Limits on the leader's coflow state: what one framework may keep
// registered, and how many agents can take part in coflows at once (the
// coordinator's fabric has one port per agent).
const (
	maxCoflowsPerFramework = 1024
	coflowPorts            = 4096
)

// Bounds on progress kept for coflows not registered yet.
const (
	orphanTTL  = 30 * time.Second
	maxOrphans = 10000
)

// orphanProgress is what a sender reported of a flow of a coflow the
// leader does not know (yet).
type orphanProgress struct {
	bytes     int64
	transfers int
	done      bool
	at        time.Time
}

// Repeat is how often the leader sends every agent its current
// list again: commands are fire-and-forget, and an agent that restarted
// or lost its connection has missed the last one. A list that changes is
// sent at once.
const Repeat = 10 * time.Second

// coflowSlot is δ, the length of a slot of the coordinator's weighted
// rotation between queues. The paper's 8 ms suits flows paced by a
// switch; the agents order whole downloads, and every rotation is a
// command to each sending agent, so the leader rotates more slowly.
const coflowSlot = 100 * time.Millisecond

// coflowKey names a coflow: coflow IDs are unique within a framework.
type coflowKey struct {
	fw protocol.FrameworkID
	id string
}

// flowRec is one registered flow and what its sender reported of it.
type flowRec struct {
	spec      protocol.FlowSpec
	bytes     int64
	transfers int
	done      bool
}

// coflowRec is one registered coflow. Its flows keep their order across
// re-registrations, new flows going last.
type coflowRec struct {
	key        coflowKey
	cid        coflow.CoflowID
	flows      []flowRec
	index      map[[2]protocol.AgentID]int
	left       int
	registered time.Time
}

// Book is the leader's coflow state (leader memory only, like
// offers): the coordinator of package coflow with agents mapped to its
// ports, every registered coflow, and the priorities last sent to each
// agent. Its methods are safe for concurrent use.
type Book struct {
	mu   sync.Mutex
	co   *coflow.Coordinator
	last time.Time // the coordinator's clock never goes back

	ports  map[protocol.AgentID]coflow.Port
	agents []protocol.AgentID // by port
	refs   []int              // per port, the registered flows that name it
	free   []coflow.Port

	coflows      map[coflowKey]*coflowRec
	byID         map[coflow.CoflowID]*coflowRec
	perFramework map[protocol.FrameworkID]int

	sent      map[protocol.AgentID]protocol.CoflowPrioritiesCommand
	epoch     uint64
	completed uint64
	// orphans is progress reported for coflows not registered (yet): a
	// new leader hears from the agents, which report again what they sent
	// on a leader change, before the frameworks register their coflows
	// again. It is applied when the coflow is registered, and forgotten
	// after orphanTTL.
	orphans     map[coflowKey]map[[2]protocol.AgentID]orphanProgress
	orphanCount int
	orphanPrune time.Time
	// decided is the epoch of the decision the lists last sent were built
	// from. Since then, rebuild says a coflow came or went, and finished
	// lists the flows that finished: under the same decision those only
	// leave their sender's list.
	decided  uint64
	rebuild  bool
	finished []finishedFlow
}

// finishedFlow names a flow that finished: by its sender, and its entry
// in the sender's list.
type finishedFlow struct {
	src protocol.AgentID
	key coflowKey
	dst protocol.AgentID
}

// New returns the coflow state of a leader elected in term:
// its commands' epochs start above every earlier leader's, since agents
// drop a command older than the last they applied.
func New(scheduler string, term uint64) (*Book, error) {
	cfg := coflow.DefaultConfig(coflowPorts)
	cfg.Slot = coflowSlot
	if scheduler != "" {
		s, err := coflow.ParseScheduler(scheduler)
		if err != nil {
			return nil, err
		}
		cfg.Scheduler = s
	}
	co, err := coflow.New(cfg)
	if err != nil {
		return nil, err
	}
	b := &Book{
		co: co, ports: map[protocol.AgentID]coflow.Port{},
		coflows: map[coflowKey]*coflowRec{}, byID: map[coflow.CoflowID]*coflowRec{},
		perFramework: map[protocol.FrameworkID]int{}, sent: map[protocol.AgentID]protocol.CoflowPrioritiesCommand{},
		orphans: map[coflowKey]map[[2]protocol.AgentID]orphanProgress{},
		epoch:   term << 32,
	}
	for p := coflowPorts - 1; p >= 0; p-- {
		b.free = append(b.free, coflow.Port(p))
	}
	b.agents = make([]protocol.AgentID, coflowPorts)
	b.refs = make([]int, coflowPorts)
	return b, nil
}

// clock returns now, or the coordinator's last time if now is earlier.
func (b *Book) clock(now time.Time) time.Time {
	if now.Before(b.last) {
		return b.last
	}
	b.last = now
	return now
}

// register adds a coflow or merges flows into a registered one (see
// protocol.CoflowRegisterRequest), or withdraws it.
func (b *Book) Register(now time.Time, r *protocol.CoflowRegisterRequest) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.clock(now)
	k := coflowKey{r.FrameworkID, r.CoflowID}
	old := b.coflows[k]
	if r.Withdraw {
		if old != nil {
			b.drop(now, old)
		}
		return nil
	}
	if old == nil && b.perFramework[r.FrameworkID] >= maxCoflowsPerFramework {
		return protocol.Errorf(protocol.ErrInvalidArgument, "framework %s has %d coflows registered, the most it may",
			r.FrameworkID, maxCoflowsPerFramework)
	}
	rec := &coflowRec{key: k, cid: coflow.CoflowID(string(r.FrameworkID) + "/" + r.CoflowID),
		index: map[[2]protocol.AgentID]int{}, registered: now}
	if old != nil {
		rec.registered = old.registered
		for _, f := range old.flows {
			rec.index[[2]protocol.AgentID{f.spec.Src, f.spec.Dst}] = len(rec.flows)
			rec.flows = append(rec.flows, f)
		}
	}
	for _, f := range r.Flows {
		pair := [2]protocol.AgentID{f.Src, f.Dst}
		if i, ok := rec.index[pair]; ok {
			rec.flows[i].spec = f
			rec.flows[i].done = rec.flows[i].done || reached(rec.flows[i])
			continue
		}
		rec.index[pair] = len(rec.flows)
		rec.flows = append(rec.flows, flowRec{spec: f})
	}
	b.adoptOrphans(rec)
	if err := b.acquirePorts(rec, old); err != nil {
		return err
	}
	if old != nil {
		b.drop(now, old)
	}
	if err := b.enter(now, rec); err != nil {
		b.releasePorts(rec)
		return err
	}
	return nil
}

// acquirePorts takes a port for every agent rec names that old (being
// replaced, may be nil) does not already hold, all or none.
func (b *Book) acquirePorts(rec, old *coflowRec) error {
	held := map[protocol.AgentID]bool{}
	if old != nil {
		for _, f := range old.flows {
			held[f.spec.Src], held[f.spec.Dst] = true, true
		}
	}
	need := map[protocol.AgentID]bool{}
	for _, f := range rec.flows {
		for _, a := range []protocol.AgentID{f.spec.Src, f.spec.Dst} {
			if _, ok := b.ports[a]; !ok && !held[a] {
				need[a] = true
			}
		}
	}
	if len(need) > len(b.free) {
		return protocol.Errorf(protocol.ErrUnavailable, "coflows already span %d agents, the most the coordinator takes",
			coflowPorts)
	}
	for _, f := range rec.flows {
		b.ref(f.spec.Src)
		b.ref(f.spec.Dst)
	}
	return nil
}

func (b *Book) ref(a protocol.AgentID) {
	p, ok := b.ports[a]
	if !ok {
		p = b.free[len(b.free)-1]
		b.free = b.free[:len(b.free)-1]
		b.ports[a], b.agents[p] = p, a
	}
	b.refs[p]++
}

// releasePorts drops rec's references to its agents' ports, freeing the
// ports no flow names any more.
func (b *Book) releasePorts(rec *coflowRec) {
	for _, f := range rec.flows {
		for _, a := range []protocol.AgentID{f.spec.Src, f.spec.Dst} {
			p := b.ports[a]
			if b.refs[p]--; b.refs[p] == 0 {
				delete(b.ports, a)
				b.agents[p] = ""
				b.free = append(b.free, p)
			}
		}
	}
}

// enter registers rec with the coordinator and replays the flows that
// have already finished.
func (b *Book) enter(now time.Time, rec *coflowRec) error {
	spec := coflow.CoflowSpec{ID: rec.cid, Flows: make([]coflow.FlowSpec, len(rec.flows))}
	for i, f := range rec.flows {
		spec.Flows[i] = coflow.FlowSpec{Src: b.ports[f.spec.Src], Dst: b.ports[f.spec.Dst], Size: f.spec.Bytes}
	}
	if err := b.co.Register(now, spec); err != nil {
		return fmt.Errorf("%w: coflow %s: %v", protocol.ErrInvalidArgument, rec.key.id, err)
	}
	b.coflows[rec.key], b.byID[rec.cid] = rec, rec
	b.perFramework[rec.key.fw]++
	b.rebuild = true
	rec.left = len(rec.flows)
	for i := range rec.flows {
		if rec.flows[i].done {
			b.complete(now, rec, i)
		}
	}
	if rec.left == 0 {
		b.finish(now, rec)
	}
	return nil
}

// reached reports whether a flow's sender has reported its totals.
func reached(f flowRec) bool {
	if f.spec.Transfers > 0 {
		return f.transfers >= f.spec.Transfers
	}
	return f.spec.Bytes > 0 && f.bytes >= f.spec.Bytes
}

// complete tells the coordinator that flow i of rec has finished.
func (b *Book) complete(now time.Time, rec *coflowRec, i int) {
	b.finished = append(b.finished, finishedFlow{src: rec.flows[i].spec.Src, key: rec.key, dst: rec.flows[i].spec.Dst})
	rec.flows[i].done = true
	rec.left--
	pilot := false
	if info, err := b.co.Info(rec.cid); err == nil {
		pilot = slices.Contains(info.Pilots, i)
	}
	// Errors here would be ours (an index or a clock gone wrong); the
	// coflow is dropped when it can no longer finish.
	_ = b.co.FlowCompleted(now, coflow.FlowCompletion{Flow: coflow.FlowRef{Coflow: rec.cid, Flow: i},
		Bytes: rec.flows[i].bytes, Pilot: pilot})
}

// finish forgets a coflow whose flows have all finished.
func (b *Book) finish(now time.Time, rec *coflowRec) {
	b.drop(now, rec)
	b.completed++
}

// drop forgets rec.
func (b *Book) drop(now time.Time, rec *coflowRec) {
	b.rebuild = true
	_ = b.co.Deregister(now, rec.cid)
	delete(b.coflows, rec.key)
	delete(b.byID, rec.cid)
	if b.perFramework[rec.key.fw]--; b.perFramework[rec.key.fw] <= 0 {
		delete(b.perFramework, rec.key.fw)
	}
	b.releasePorts(rec)
}

// report applies an agent's progress report. Entries for coflows or flows
// the leader does not know (registered with an earlier leader, or already
// finished) and entries about flows another agent sends are skipped and
// counted.
func (b *Book) Report(now time.Time, r *protocol.CoflowReportRequest) (skipped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.clock(now)
	var progress []coflow.FlowProgress
	for _, p := range r.Flows {
		if p.Src != r.AgentID {
			skipped++
			continue
		}
		rec := b.coflows[coflowKey{p.FrameworkID, p.CoflowID}]
		if rec == nil {
			b.keepOrphan(now, p)
			skipped++
			continue
		}
		i, ok := rec.index[[2]protocol.AgentID{p.Src, p.Dst}]
		if !ok || rec.flows[i].done {
			skipped++
			continue
		}
		f := &rec.flows[i]
		f.bytes, f.transfers = max(f.bytes, p.BytesSent), max(f.transfers, p.Transfers)
		if p.Done || reached(*f) {
			b.complete(now, rec, i)
			if rec.left == 0 {
				b.finish(now, rec)
			}
			continue
		}
		progress = append(progress, coflow.FlowProgress{Flow: coflow.FlowRef{Coflow: rec.cid, Flow: i}, Sent: f.bytes})
	}
	if len(progress) > 0 {
		_ = b.co.Progress(now, progress)
	}
	return skipped
}

// removeFramework forgets every coflow of fw.
func (b *Book) RemoveFramework(now time.Time, fw protocol.FrameworkID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.clock(now)
	for k, rec := range b.coflows {
		if k.fw == fw {
			b.drop(now, rec)
		}
	}
}
