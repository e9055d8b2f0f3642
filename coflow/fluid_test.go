package coflow

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"
)

// The fluid executor below is a tiny flow-level discrete-event simulator for
// the hand-checked tests: rates stay constant between events (arrivals,
// flow completions, the decision's NextChange, progress-report boundaries),
// and completion times are computed exactly. Times are in seconds, sizes in
// MB (2^20 bytes) and every port side carries 1 MB/s, so a 3 MB flow alone on
// its ports takes 3 s.

const mb = 1 << 20

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return epoch.Add(time.Duration(math.Round(sec * 1e9))) }

func seconds(t time.Time) float64 { return t.Sub(epoch).Seconds() }

// flowMB is a flow of a test coflow, size in MB.
type flowMB struct {
	src, dst Port
	size     float64
}

type testCoflow struct {
	id      CoflowID
	arrival float64
	flows   []flowMB
}

func spec(tc testCoflow) CoflowSpec {
	s := CoflowSpec{ID: tc.id}
	for _, f := range tc.flows {
		s.Flows = append(s.Flows, FlowSpec{Src: f.src, Dst: f.dst, Size: int64(f.size * mb)})
	}
	return s
}

type fluidOpts struct {
	// reportEvery sends every unfinished flow's bytes at multiples of this
	// many seconds (aalo's δ); 0 never.
	reportEvery float64
	// reportEachDecision sends them before every Decide (sebf, scf).
	reportEachDecision bool
	// onDecide, if set, sees every decision.
	onDecide func(t float64, d *Decision)
}

type fluidResult struct {
	cct    map[CoflowID]float64         // seconds from arrival to last flow
	finish map[CoflowID]map[int]float64 // flow completion times
	info   map[CoflowID]CoflowInfo      // state just before Deregister
	epochs int
}

type simFlow struct {
	ref       FlowRef
	size, rem float64 // bytes
	done      bool
}

// fluidRun is the state of one runFluid: the coordinator, the coflows
// registered with it and their flows, and the simulated time.
type fluidRun struct {
	t         *testing.T
	co        *Coordinator
	res       fluidResult
	flows     map[CoflowID][]*simFlow
	order     []CoflowID // registered, in arrival order
	arrivalOf map[CoflowID]float64
	left      map[CoflowID]int
	now       float64
}

// runFluid drives a coordinator with cfg through the coflows and returns
// their CCTs.
func runFluid(t *testing.T, cfg Config, coflows []testCoflow, o fluidOpts) fluidResult {
	t.Helper()
	co, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	arrivals := slices.Clone(coflows)
	slices.SortStableFunc(arrivals, func(a, b testCoflow) int { return cmp.Compare(a.arrival, b.arrival) })
	z := &fluidRun{t: t, co: co, res: fluidResult{cct: map[CoflowID]float64{}, finish: map[CoflowID]map[int]float64{},
		info: map[CoflowID]CoflowInfo{}}, flows: map[CoflowID][]*simFlow{},
		arrivalOf: map[CoflowID]float64{}, left: map[CoflowID]int{}}
	res := &z.res
	for step := 0; ; step++ {
		if step > 100000 {
			t.Fatalf("no end after %d steps", step)
		}
		z.completeDue()
		for len(arrivals) > 0 && arrivals[0].arrival <= z.now+1e-9 {
			z.register(arrivals[0])
			arrivals = arrivals[1:]
		}
		if len(arrivals) == 0 && len(res.cct) == len(coflows) {
			break
		}
		if o.reportEvery > 0 && isMultiple(z.now, o.reportEvery) {
			z.report()
		}
		if o.reportEachDecision {
			z.report()
		}
		now := z.now
		d, err := co.Decide(at(now))
		if err != nil {
			t.Fatalf("t=%v: Decide: %v", now, err)
		}
		if o.onDecide != nil {
			o.onDecide(now, d)
		}
		byRef := z.rates(d, coflows)
		next := math.Inf(1)
		for _, id := range z.order {
			for _, f := range z.flows[id] {
				if r := byRef[f.ref]; r > 0 && !f.done {
					next = math.Min(next, now+f.rem/r)
				}
			}
		}
		if len(arrivals) > 0 {
			next = math.Min(next, arrivals[0].arrival)
		}
		if !d.NextChange.IsZero() {
			next = math.Min(next, seconds(d.NextChange))
		}
		if o.reportEvery > 0 {
			next = math.Min(next, (math.Floor(now/o.reportEvery+1e-9)+1)*o.reportEvery)
		}
		if math.IsInf(next, 1) {
			t.Fatalf("t=%v: stalled: no flow has a rate and nothing is due", now)
		}
		dt := next - now
		for _, id := range z.order {
			for _, f := range z.flows[id] {
				if r := byRef[f.ref]; r > 0 && !f.done {
					f.rem -= r * dt
				}
			}
		}
		z.now = next
	}
	res.epochs = co.Stats().Recomputes
	return *res
}

// report tells the coordinator every unfinished flow's progress.
func (z *fluidRun) report() {
	var rs []FlowProgress
	for _, id := range z.order {
		for _, f := range z.flows[id] {
			if !f.done {
				rs = append(rs, FlowProgress{Flow: f.ref, Sent: int64(math.Round(f.size - f.rem))})
			}
		}
	}
	if err := z.co.Progress(at(z.now), rs); err != nil {
		z.t.Fatalf("t=%v: Progress: %v", z.now, err)
	}
}

// completeDue completes the flows done by now, in arrival then flow order,
// and deregisters each coflow whose last flow that was.
func (z *fluidRun) completeDue() {
	now := z.now
	for _, id := range z.order {
		for _, f := range z.flows[id] {
			if f.done || f.rem > 1e-6*f.size+1e-3 {
				continue
			}
			f.done = true
			info, _ := z.co.Info(id)
			err := z.co.FlowCompleted(at(now), FlowCompletion{Flow: f.ref, Bytes: int64(f.size),
				Pilot: slices.Contains(info.Pilots, f.ref.Flow)})
			if err != nil {
				z.t.Fatalf("t=%v: FlowCompleted %v: %v", now, f.ref, err)
			}
			z.res.finish[id][f.ref.Flow] = now
			if z.left[id]--; z.left[id] == 0 {
				z.res.cct[id] = now - z.arrivalOf[id]
				z.res.info[id], _ = z.co.Info(id)
				if err := z.co.Deregister(at(now), id); err != nil {
					z.t.Fatalf("t=%v: Deregister %s: %v", now, id, err)
				}
			}
		}
	}
}

// register registers coflow tc, arriving now.
func (z *fluidRun) register(tc testCoflow) {
	if err := z.co.Register(at(z.now), spec(tc)); err != nil {
		z.t.Fatalf("t=%v: Register %s: %v", z.now, tc.id, err)
	}
	z.order = append(z.order, tc.id)
	z.arrivalOf[tc.id] = tc.arrival
	z.left[tc.id] = len(tc.flows)
	z.res.finish[tc.id] = map[int]float64{}
	for i, f := range tc.flows {
		z.flows[tc.id] = append(z.flows[tc.id], &simFlow{ref: FlowRef{Coflow: tc.id, Flow: i},
			size: float64(int64(f.size * mb)), rem: float64(int64(f.size * mb))})
	}
}

// rates returns each flow's rate under decision d, failing the test if a
// finished flow gets one or a port carries more than its capacity.
func (z *fluidRun) rates(d *Decision, coflows []testCoflow) map[FlowRef]float64 {
	byRef := map[FlowRef]float64{}
	egress, ingress := map[Port]float64{}, map[Port]float64{}
	for _, r := range Rates(d, mb, z.co) {
		byRef[r.Flow] = r.Rate
		l := spec(coflowByID(coflows, r.Flow.Coflow)).Flows[r.Flow.Flow]
		egress[l.Src] += r.Rate
		ingress[l.Dst] += r.Rate
		if z.co.Finished(r.Flow.Coflow, r.Flow.Flow) {
			z.t.Fatalf("t=%v: finished flow %v got rate %v", z.now, r.Flow, r.Rate)
		}
	}
	for p, r := range egress {
		if r > mb*(1+1e-9) {
			z.t.Fatalf("t=%v: egress %d carries %v B/s, over capacity", z.now, p, r)
		}
	}
	for p, r := range ingress {
		if r > mb*(1+1e-9) {
			z.t.Fatalf("t=%v: ingress %d carries %v B/s, over capacity", z.now, p, r)
		}
	}
	return byRef
}

func coflowByID(set []testCoflow, id CoflowID) testCoflow {
	for _, c := range set {
		if c.id == id {
			return c
		}
	}
	return testCoflow{}
}

func isMultiple(x, step float64) bool {
	k := math.Round(x / step)
	return math.Abs(x-k*step) < 1e-9
}

// checkCCT compares CCTs (seconds) with a tolerance for float time.
func checkCCT(t *testing.T, got map[CoflowID]float64, want map[CoflowID]float64) {
	t.Helper()
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("coflow %s did not finish, want CCT %v", id, w)
			continue
		}
		if math.Abs(g-w) > 1e-6 {
			t.Errorf("CCT(%s) = %v, want %v", id, g, w)
		}
	}
}

// testConfig is the paper's defaults on a small fabric, with a slot long
// enough that the weighted rotation never leaves the top queue within a
// test (rounds of 283 slots) unless a test sets Slot itself.
func testConfig(s Scheduler, ports int) Config {
	cfg := DefaultConfig(ports)
	cfg.Scheduler = s
	cfg.Capacity = mb
	cfg.Slot = 1000 * time.Second
	return cfg
}
