package coflowsim

import (
	"fmt"
	"math"
	"time"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/internal/heapq"
)

// The coflow simulator is a fluid, flow-level discrete-event model: every
// port side carries Capacity bytes per second, rates stay constant between
// events, and completion times are computed exactly. Per event time it
// delivers completions, then arrivals, then byte reports to the coordinator,
// asks for a decision and, when anything changed, turns it into rates
// (coflow.Rates). It then advances to the earliest of the next flow
// completion, the next arrival, the decision's NextChange and, for aalo,
// the next report boundary (every δ).
//
// coflow.Rates over every flow after every completion is too slow for
// FB2010, so event-driven runs compute the same rates incrementally:
// fastRates (rates.go) for priority decisions, maddRates (madd.go) for
// sebf's and fifo's capped ones and fairFluid (fair.go, maxmin.go) for fair
// and fair-split; the last two also find the next completion from a heap
// instead of scanning the flows in flight.

// simEpoch is the coordinator clock's origin; the simulator's clock is
// float seconds since it.
var simEpoch = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)

func clockAt(sec float64) time.Time { return simEpoch.Add(time.Duration(math.Round(sec * 1e9))) }

func clockSeconds(t time.Time) float64 { return float64(t.Sub(simEpoch)) / 1e9 }

// sameTime is how close two event times must be to count as one (1 ns).
const sameTime = 1e-9

// flowState is one flow of an admitted coflow, as the fluid model sees it.
type flowState struct {
	rem   float64 // bytes left (as of at, in madd mode)
	rate  float64 // current rate, bytes/s
	cap   float64 // madd mode: the decision's MADD cap
	at    float64 // madd mode: when rem was last brought up to date
	share float64 // madd mode: the second pass's share on top of cap
	ver   uint32  // madd mode: bumped on every rate change
	size  int64
	rep   int64 // bytes last reported
	end   float64
	src   int
	pilot bool
	done  bool
	sent  bool // sent bytes since the last report
}

// coflowState is one coflow of the trace during a run.
type coflowState struct {
	id       coflow.CoflowID
	tc       *TraceCoflow
	seq      int
	arrival  float64
	flows    []flowState
	left     int // flows not finished
	unsent   int // flows whose completion the coordinator has not heard of
	finish   float64
	est      float64
	indexes  []*grantIndex // of its grant lists, for fastRates
	recvRank map[coflow.Port]int32
}

// flowAt names flow f of coflow c.
type flowAt struct {
	c *coflowState
	f int
}

// engine is one run: the coordinator, the fluid model of the fabric and the
// books the two share.
type engine struct {
	tr      *Trace
	policy  string
	cfg     coflow.Config
	quantum float64
	co      *coflow.Coordinator
	cap     float64
	delta   float64

	coflows []*coflowState // by trace order
	byID    map[coflow.CoflowID]*coflowState
	hit     *coflowState // one-entry cache for Finished
	next    int          // next arrival
	active  int          // unfinished coflows
	now     float64

	rated   []flowAt // flows with a positive rate
	pending []flowAt // finished, not yet delivered
	sentSet []flowAt // flows that sent since the last report
	report  int64    // next aalo report boundary, in δ
	reports bool     // aalo: report every δ
	eachDec bool     // sebf, fifo, scf: report before every recomputation

	dec *coflow.Decision
	// rawDec is the coordinator's latest decision; dec is it, or with
	// orderOnly (Config.OrderOnly) a copy without rate caps.
	rawDec    *coflow.Decision
	orderOnly bool
	stale     bool       // rates must be recomputed
	fair      *fairFluid // fair's and fair-split's fast path (event-driven runs)
	// maddMode: sebf and fifo's capped decisions go through mr.
	maddMode bool
	mr       maddRates // capped decisions' incremental rates (event-driven runs)
	load     loadMeter

	busyE, busyI []bool // fastRates' scratch
	freeE, freeI *portSet
	sendMask     []uint64
	mask         []uint64
	rateBuf      []coflow.FlowRate
	// checkRates makes every rate computation compare fastRates with
	// coflow.Rates (tests).
	checkRates bool
}

func newEngine(tr *Trace, ccfg coflow.Config, cfg Config) (*engine, error) {
	co, err := coflow.New(ccfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSimulation, err)
	}
	s := &engine{
		tr: tr, policy: cfg.Policy, cfg: ccfg, co: co, cap: ccfg.Capacity, delta: ccfg.Slot.Seconds(),
		quantum: cfg.Quantum.Seconds(), mr: maddRates{ends: heapq.New(endsFirst)},
		byID:    make(map[coflow.CoflowID]*coflowState, len(tr.Coflows)),
		reports: ccfg.Scheduler == coflow.SchedulerAalo || ccfg.Scheduler == coflow.SchedulerAaloOracle,
		eachDec: ccfg.Scheduler == coflow.SchedulerSEBF || ccfg.Scheduler == coflow.SchedulerSCF ||
			ccfg.Scheduler == coflow.SchedulerFIFO,
	}
	s.load = newLoadMeter(tr.Ports, s.delta)
	s.orderOnly = cfg.OrderOnly
	s.maddMode = (ccfg.Scheduler == coflow.SchedulerSEBF || ccfg.Scheduler == coflow.SchedulerFIFO) && s.quantum <= 0 && !s.orderOnly
	if (ccfg.Scheduler == coflow.SchedulerFair || ccfg.Scheduler == coflow.SchedulerFairSplit) && s.quantum <= 0 {
		s.fair = newFairFluid(tr.Ports, s.cap, ccfg.Scheduler == coflow.SchedulerFair)
	}
	for i := range tr.Coflows {
		tc := &tr.Coflows[i]
		if i > 0 && tc.ArrivalMs < tr.Coflows[i-1].ArrivalMs {
			return nil, fmt.Errorf("%w: coflows out of arrival order at %s", ErrBadSimulation, tc.ID)
		}
		for _, f := range tc.Flows {
			if f.Src < 0 || f.Src >= tr.Ports || f.Dst < 0 || f.Dst >= tr.Ports || f.Bytes <= 0 {
				return nil, fmt.Errorf("%w: coflow %s: flow %d->%d of %d bytes", ErrBadSimulation, tc.ID, f.Src, f.Dst, f.Bytes)
			}
		}
		s.coflows = append(s.coflows, &coflowState{id: coflow.CoflowID(tc.ID), tc: tc, seq: i,
			arrival: float64(tc.ArrivalMs) / 1e3, left: len(tc.Flows), unsent: len(tc.Flows)})
	}
	return s, nil
}

// Finished implements coflow.FinishedFlows from the simulator's books.
func (s *engine) Finished(id coflow.CoflowID, f int) bool {
	c := s.lookup(id)
	return c == nil || f < 0 || f >= len(c.flows) || c.flows[f].done
}

func (s *engine) lookup(id coflow.CoflowID) *coflowState {
	if s.hit != nil && s.hit.id == id {
		return s.hit
	}
	c := s.byID[id]
	if c != nil {
		s.hit = c
	}
	return c
}

// deliverNow says whether the coordinator hears of events at s.now: always,
// unless a quantum is set and s.now is not on its grid.
func (s *engine) deliverNow() bool {
	if s.quantum <= 0 {
		return true
	}
	k := math.Round(s.now / s.quantum)
	return math.Abs(s.now-k*s.quantum) < sameTime
}

func (s *engine) run() error {
	for steps := 0; ; steps++ {
		if s.deliverNow() {
			if err := s.deliver(); err != nil {
				return err
			}
		}
		if s.next == len(s.coflows) && s.active == 0 {
			s.load.close()
			return nil
		}
		next, err := s.nextEvent()
		if err != nil {
			return err
		}
		s.advance(next)
	}
}
