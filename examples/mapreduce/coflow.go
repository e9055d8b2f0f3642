package main

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

// shuffles registers every job's shuffle with the master as a coflow, so
// that the agents serve the fetches of the shuffle closest to done first
// (Philae). A shuffle's flows go from each agent holding map outputs to
// each agent running reducers; it grows as reducers are placed, each one
// adding one transfer per map output on every source agent. The calls go
// out from one goroutine, latest state first, since the scheduler's
// callbacks that place reducers must not block on the master.
type shuffles struct {
	out  *printer
	role string

	mu      sync.Mutex
	flows   map[string]map[[2]protocol.AgentID]int // job -> (src, dst) -> transfers
	dirty   map[string]bool
	ended   map[string]bool
	wake    chan struct{}
	started bool
}

func newShuffles(out *printer, role string) *shuffles {
	return &shuffles{out: out, role: role, flows: map[string]map[[2]protocol.AgentID]int{},
		dirty: map[string]bool{}, ended: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// reducerPlaced adds a reducer of job on dst that fetches one output from
// each agent in srcs (an agent appearing once per output it holds).
func (s *shuffles) reducerPlaced(job string, dst protocol.AgentID, srcs []protocol.AgentID) {
	if dst == "" || len(srcs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended[job] {
		return
	}
	f := s.flows[job]
	if f == nil {
		f = map[[2]protocol.AgentID]int{}
		s.flows[job] = f
	}
	for _, src := range srcs {
		f[[2]protocol.AgentID{src, dst}]++
	}
	s.dirty[job] = true
	s.signal()
}

// jobEnded withdraws job's coflow.
func (s *shuffles) jobEnded(job string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.flows[job]; !ok || s.ended[job] {
		return
	}
	s.ended[job] = true
	s.dirty[job] = true
	s.signal()
}

func (s *shuffles) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// start runs the registration loop with d until ctx ends; later calls do
// nothing.
func (s *shuffles) start(ctx context.Context, d *framework.Driver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	go s.loop(ctx, d)
}

func (s *shuffles) loop(ctx context.Context, d *framework.Driver) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for _, job := range s.takeDirty() {
			s.send(ctx, d, job)
		}
	}
}

func (s *shuffles) takeDirty() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := slices.Sorted(maps.Keys(s.dirty))
	clear(s.dirty)
	return jobs
}

// send registers job's shuffle as it stands, or withdraws it once ended.
// A refusal is reported and the job runs on with unordered fetches.
func (s *shuffles) send(ctx context.Context, d *framework.Driver, job string) {
	s.mu.Lock()
	ended := s.ended[job]
	var flows []protocol.FlowSpec
	for _, k := range slices.SortedFunc(maps.Keys(s.flows[job]), comparePairs) {
		flows = append(flows, protocol.FlowSpec{Src: k[0], Dst: k[1], Transfers: s.flows[job][k]})
	}
	if ended {
		delete(s.flows, job)
	}
	s.mu.Unlock()
	if ended {
		// A withdrawal that fails (the run is ending, say) costs nothing:
		// the master forgets a framework's coflows with the framework.
		_ = d.WithdrawCoflow(ctx, job)
		return
	}
	if err := d.RegisterCoflow(ctx, job, flows); err != nil && ctx.Err() == nil {
		s.out.printf("[%s] %s: shuffle coflow not registered: %v\n", s.role, job, err)
	}
}

func comparePairs(a, b [2]protocol.AgentID) int {
	return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
}
