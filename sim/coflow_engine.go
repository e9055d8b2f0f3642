package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/allot-project/allot/coflow"
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
// fastRates (coflow_rates.go) for priority decisions, maddRates
// (coflow_madd.go) for sebf's and fifo's capped ones and fairFluid
// (coflow_fair.go, coflow_maxmin.go) for fair and fair-split; the last two
// also find the next completion from a heap instead of scanning the flows
// in flight.

// simEpoch is the coordinator clock's origin; the simulator's clock is
// float seconds since it.
var simEpoch = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)

func clockAt(sec float64) time.Time { return simEpoch.Add(time.Duration(math.Round(sec * 1e9))) }

func clockSeconds(t time.Time) float64 { return float64(t.Sub(simEpoch)) / 1e9 }

// sameTime is how close two event times must be to count as one (1 ns).
const sameTime = 1e-9

type cfFlow struct {
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

type cfCoflow struct {
	id       coflow.CoflowID
	tc       *TraceCoflow
	seq      int
	arrival  float64
	flows    []cfFlow
	left     int // flows not finished
	unsent   int // flows whose completion the coordinator has not heard of
	finish   float64
	est      float64
	indexes  []*grantIndex // of its grant lists, for fastRates
	recvRank map[coflow.Port]int32
}

type flowAt struct {
	c *cfCoflow
	f int
}

type coflowSim struct {
	tr      *CoflowTrace
	policy  string
	cfg     coflow.Config
	quantum float64
	co      *coflow.Coordinator
	cap     float64
	delta   float64

	coflows []*cfCoflow // by trace order
	byID    map[coflow.CoflowID]*cfCoflow
	hit     *cfCoflow // one-entry cache for Finished
	next    int       // next arrival
	active  int       // unfinished coflows
	now     float64

	rated   []flowAt // flows with a positive rate
	pending []flowAt // finished, not yet delivered
	sentSet []flowAt // flows that sent since the last report
	report  int64    // next aalo report boundary, in δ
	reports bool     // aalo: report every δ
	eachDec bool     // sebf, fifo, scf: report before every recomputation

	dec   *coflow.Decision
	stale bool       // rates must be recomputed
	fair  *fairFluid // fair's and fair-split's fast path (event-driven runs)
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

func newCoflowSim(tr *CoflowTrace, ccfg coflow.Config, cfg CoflowSimConfig) (*coflowSim, error) {
	co, err := coflow.New(ccfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCoflowSim, err)
	}
	s := &coflowSim{
		tr: tr, policy: cfg.Policy, cfg: ccfg, co: co, cap: ccfg.Capacity, delta: ccfg.Slot.Seconds(),
		quantum: cfg.Quantum.Seconds(),
		byID:    make(map[coflow.CoflowID]*cfCoflow, len(tr.Coflows)),
		reports: ccfg.Scheduler == coflow.SchedulerAalo || ccfg.Scheduler == coflow.SchedulerAaloOracle,
		eachDec: ccfg.Scheduler == coflow.SchedulerSEBF || ccfg.Scheduler == coflow.SchedulerSCF ||
			ccfg.Scheduler == coflow.SchedulerFIFO,
	}
	s.load = newLoadMeter(tr.Ports, s.delta)
	s.maddMode = (ccfg.Scheduler == coflow.SchedulerSEBF || ccfg.Scheduler == coflow.SchedulerFIFO) && s.quantum <= 0
	if (ccfg.Scheduler == coflow.SchedulerFair || ccfg.Scheduler == coflow.SchedulerFairSplit) && s.quantum <= 0 {
		s.fair = newFairFluid(tr.Ports, s.cap, ccfg.Scheduler == coflow.SchedulerFair)
	}
	for i := range tr.Coflows {
		tc := &tr.Coflows[i]
		if i > 0 && tc.ArrivalMs < tr.Coflows[i-1].ArrivalMs {
			return nil, fmt.Errorf("%w: coflows out of arrival order at %s", ErrBadCoflowSim, tc.ID)
		}
		for _, f := range tc.Flows {
			if f.Src < 0 || f.Src >= tr.Ports || f.Dst < 0 || f.Dst >= tr.Ports || f.Bytes <= 0 {
				return nil, fmt.Errorf("%w: coflow %s: flow %d->%d of %d bytes", ErrBadCoflowSim, tc.ID, f.Src, f.Dst, f.Bytes)
			}
		}
		s.coflows = append(s.coflows, &cfCoflow{id: coflow.CoflowID(tc.ID), tc: tc, seq: i,
			arrival: float64(tc.ArrivalMs) / 1e3, left: len(tc.Flows), unsent: len(tc.Flows)})
	}
	return s, nil
}

// Finished implements coflow.FinishedFlows from the simulator's books.
func (s *coflowSim) Finished(id coflow.CoflowID, f int) bool {
	c := s.lookup(id)
	return c == nil || f < 0 || f >= len(c.flows) || c.flows[f].done
}

func (s *coflowSim) lookup(id coflow.CoflowID) *cfCoflow {
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
func (s *coflowSim) deliverNow() bool {
	if s.quantum <= 0 {
		return true
	}
	k := math.Round(s.now / s.quantum)
	return math.Abs(s.now-k*s.quantum) < sameTime
}

func (s *coflowSim) run() error {
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

// deliver hands the coordinator everything due at s.now and refreshes the
// rates if needed.
func (s *coflowSim) deliver() error {
	t := clockAt(s.now)
	if len(s.pending) > 0 {
		slices.SortFunc(s.pending, func(a, b flowAt) int {
			return cmp.Or(cmp.Compare(a.c.seq, b.c.seq), cmp.Compare(a.f, b.f))
		})
		for _, p := range s.pending {
			fl := &p.c.flows[p.f]
			err := s.co.FlowCompleted(t, coflow.FlowCompletion{Flow: coflow.FlowRef{Coflow: p.c.id, Flow: p.f},
				Bytes: fl.size, Pilot: fl.pilot})
			if err != nil {
				return fmt.Errorf("t=%.6fs: %w", s.now, err)
			}
			s.load.message(fl.end, fl.src)
			s.load.completions++
			if p.c.unsent--; p.c.unsent == 0 {
				if err := s.retire(t, p.c); err != nil {
					return err
				}
			}
		}
		s.pending = s.pending[:0]
		s.stale = true
	}
	for s.next < len(s.coflows) && s.coflows[s.next].arrival <= s.now+sameTime {
		if err := s.admit(t, s.coflows[s.next]); err != nil {
			return err
		}
		s.next++
		s.stale = true
	}
	if s.active == 0 {
		s.rated = s.rated[:0]
		return nil
	}
	if s.reports && s.now >= float64(s.report)*s.delta-sameTime {
		if err := s.sendReport(t); err != nil {
			return err
		}
		s.report = int64(math.Floor(s.now/s.delta+sameTime)) + 1
	}
	if s.eachDec && s.co.Stale(t) {
		if err := s.sendReport(t); err != nil {
			return err
		}
	}
	d, err := s.co.Decide(t)
	if err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	if d != s.dec {
		s.load.decision(s.now, s.dec, d)
		s.dec, s.stale = d, true
	}
	if s.stale && s.fair != nil {
		s.fair.refresh(s.now)
		if s.checkRates {
			s.checkFair()
		}
		s.stale = false
		s.load.rateRuns++
	} else if s.stale {
		s.setRates()
	}
	return nil
}

func (s *coflowSim) admit(t time.Time, c *cfCoflow) error {
	spec := coflow.CoflowSpec{ID: c.id, Flows: make([]coflow.FlowSpec, len(c.tc.Flows))}
	c.flows = make([]cfFlow, len(c.tc.Flows))
	for i, f := range c.tc.Flows {
		spec.Flows[i] = coflow.FlowSpec{Src: coflow.Port(f.Src), Dst: coflow.Port(f.Dst), Size: f.Bytes}
		c.flows[i] = cfFlow{rem: float64(f.Bytes), size: f.Bytes, src: f.Src}
	}
	if err := s.co.Register(t, spec); err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	info, err := s.co.Info(c.id)
	if err != nil {
		return err
	}
	for _, f := range info.Pilots {
		c.flows[f].pilot = true
	}
	if s.fair != nil {
		for i, f := range c.tc.Flows {
			s.fair.join(flowAt{c, i}, f.Src, f.Dst, float64(f.Bytes), s.now)
		}
	}
	s.byID[c.id] = c
	s.active++
	return nil
}

// retire deregisters a finished coflow.
func (s *coflowSim) retire(t time.Time, c *cfCoflow) error {
	if info, err := s.co.Info(c.id); err == nil && len(info.Pilots) > 0 {
		c.est = info.EstimatedSize
	}
	if err := s.co.Deregister(t, c.id); err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	delete(s.byID, c.id)
	if s.hit == c {
		s.hit = nil
	}
	c.flows, c.indexes, c.recvRank = nil, nil, nil // the trace keeps the sizes; free the fluid state
	s.active--
	return nil
}

// reportFlow appends flow p's progress to reps if it is unfinished and sent
// bytes since its last report, and counts the agent's message.
func (s *coflowSim) reportFlow(reps []coflow.FlowProgress, p flowAt) []coflow.FlowProgress {
	fl := &p.c.flows[p.f]
	if fl.done {
		return reps
	}
	b := min(fl.size, max(fl.rep, int64(float64(fl.size)-s.remNow(fl))))
	if b == fl.rep {
		return reps
	}
	fl.rep = b
	s.load.message(s.now-sameTime, fl.src)
	return append(reps, coflow.FlowProgress{Flow: coflow.FlowRef{Coflow: p.c.id, Flow: p.f}, Sent: b})
}

// sendReport reports the bytes of every unfinished flow that sent since the
// last report (the others have nothing new to say).
func (s *coflowSim) sendReport(t time.Time) error {
	var reps []coflow.FlowProgress
	if s.maddMode {
		reps = s.maddReport(reps)
	}
	for _, p := range s.sentSet {
		if p.c.flows != nil {
			p.c.flows[p.f].sent = false
			reps = s.reportFlow(reps, p)
		}
	}
	s.sentSet = s.sentSet[:0]
	if len(reps) == 0 {
		return nil
	}
	s.load.reports++
	if err := s.co.Progress(t, reps); err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	return nil
}

// setRates turns the current decision into rates.
func (s *coflowSim) setRates() {
	if s.maddMode {
		s.maddSetRates()
		return
	}
	for _, p := range s.rated {
		if p.c.flows != nil {
			p.c.flows[p.f].rate = 0
		}
	}
	s.rated = s.rated[:0]
	rates := s.fastRates(s.dec)
	if s.checkRates {
		if want := coflow.Rates(s.dec, s.cap, s); !slices.Equal(rates, want) {
			panic(fmt.Sprintf("t=%.6fs: fastRates %v, coflow.Rates %v", s.now, rates, want))
		}
	}
	for _, r := range rates {
		c := s.lookup(r.Flow.Coflow)
		c.flows[r.Flow.Flow].rate = r.Rate
		s.rated = append(s.rated, flowAt{c, r.Flow.Flow})
	}
	s.stale = false
	s.load.rateRuns++
}

// nextEvent is the time of the next event after s.now.
func (s *coflowSim) nextEvent() (float64, error) {
	next := math.Inf(1)
	if s.fair != nil {
		next = s.fair.next(next)
	}
	if s.maddMode {
		next = s.maddNext(next)
	}
	for _, p := range s.rated {
		if fl := &p.c.flows[p.f]; !fl.done && fl.rate > 0 {
			next = min(next, s.now+fl.rem/fl.rate)
		}
	}
	if s.quantum > 0 {
		// Everything else waits for the grid.
		k := math.Floor(s.now/s.quantum+sameTime) + 1
		if s.active == 0 && s.next < len(s.coflows) {
			k = max(k, math.Ceil(s.coflows[s.next].arrival/s.quantum-sameTime))
		}
		return min(next, k*s.quantum), nil
	}
	if s.next < len(s.coflows) {
		next = min(next, s.coflows[s.next].arrival)
	}
	if s.active > 0 && s.dec != nil && !s.dec.NextChange.IsZero() {
		if nc := clockSeconds(s.dec.NextChange); nc > s.now {
			next = min(next, nc)
		}
	}
	if s.active > 0 && s.reports {
		next = min(next, float64(s.report)*s.delta)
	}
	if math.IsInf(next, 1) || next < s.now {
		return 0, fmt.Errorf("t=%.6fs: stalled with %d coflows unfinished", s.now, s.active)
	}
	return next, nil
}

// advance moves the fluid model to next, finishing the flows that end
// there.
func (s *coflowSim) advance(next float64) {
	dt := next - s.now
	if s.active > 0 {
		s.load.busy(s.now, next)
	}
	finished := false
	if s.fair != nil {
		for _, p := range s.fair.advance(next) {
			s.finish(p, next)
		}
	}
	if s.maddMode {
		s.maddAdvance(next)
	}
	for _, p := range s.rated {
		fl := &p.c.flows[p.f]
		if fl.done || fl.rate <= 0 {
			continue
		}
		if !fl.sent {
			fl.sent = true
			s.sentSet = append(s.sentSet, p)
		}
		if s.now+fl.rem/fl.rate <= next+sameTime {
			s.finish(p, next)
			finished = true
			continue
		}
		fl.rem -= fl.rate * dt
	}
	if finished && s.quantum > 0 {
		// Finished flows keep nothing; the others keep their rates until
		// the grid.
		s.rated = slices.DeleteFunc(s.rated, func(p flowAt) bool { return p.c.flows[p.f].done })
	}
	s.now = next
}

// finish ends flow p at time end.
func (s *coflowSim) finish(p flowAt, end float64) {
	fl := &p.c.flows[p.f]
	if s.maddMode {
		s.maddRelease(fl, p.c.tc.Flows[p.f])
	}
	fl.rem, fl.done, fl.end, fl.rate = 0, true, end, 0
	tf := &p.c.tc.Flows[p.f]
	p.c.finished(p.f, tf.Src, tf.Dst)
	p.c.left--
	if p.c.left == 0 {
		p.c.finish = end
	}
	s.pending = append(s.pending, p)
}

func (s *coflowSim) result() CoflowResult {
	res := CoflowResult{Policy: s.policy, Coflows: make(map[string]CoflowOutcome, len(s.coflows))}
	var ccts, errs []float64
	for _, c := range s.coflows {
		cct := (c.finish - c.arrival) * 1e3
		o := CoflowOutcome{CCTms: cct, ArrivalMs: c.tc.ArrivalMs, Flows: len(c.tc.Flows), Bytes: c.tc.Bytes(),
			EstimatedBytes: c.est}
		res.Coflows[c.tc.ID] = o
		res.Order = append(res.Order, c.tc.ID)
		ccts = append(ccts, cct)
		res.MakespanMs = max(res.MakespanMs, c.finish*1e3)
		if c.est > 0 {
			errs = append(errs, math.Abs(c.est-float64(o.Bytes))/float64(o.Bytes))
		}
	}
	res.AvgCCTms = mean(ccts)
	res.P50CCTms = percentile(ccts, 0.5)
	res.P90CCTms = percentile(ccts, 0.9)
	res.P99CCTms = percentile(ccts, 0.99)
	if len(errs) > 0 {
		m := mean(errs)
		v := 0.0
		for _, e := range errs {
			v += (e - m) * (e - m)
		}
		res.Estimation = &EstimationSummary{Coflows: len(errs), MeanError: m, StdError: math.Sqrt(v / float64(len(errs)))}
	}
	res.Load = s.load.summary(s.co.Stats().Recomputes)
	return res
}
