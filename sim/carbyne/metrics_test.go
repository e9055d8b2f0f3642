package carbyne

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Two jobs hold 0.5 and 0.25 of the cluster through one window: Jain's
// index is 0.75²/(2·(0.25+0.0625)) = 0.9. In the next window the second
// job is active for 30 s holding 0.5, the first for all 60 s holding 0.5:
// equal averages, index 1. The mean is 0.95.
func TestJainTracker_Index(t *testing.T) {
	t.Parallel()
	tr := newJainTracker([]int64{100}, 2)
	a := &simJob{idx: 0, used: []int64{50}, spec: jobSpec{arrival: 0}, finish: 120 * time.Second}
	b := &simJob{idx: 1, used: []int64{25}, spec: jobSpec{arrival: 0}, finish: 90 * time.Second}
	tr.set(a, 0)
	tr.set(b, 0)
	tr.advance(b, 60*time.Second)
	b.used[0] = 50
	tr.set(b, 60*time.Second)
	tr.advance(b, 90*time.Second)
	b.used[0] = 0
	tr.set(b, 90*time.Second)
	tr.advance(a, 120*time.Second)
	if got := tr.index([]*simJob{a, b}, 120*time.Second); !near(got, 0.95) {
		t.Errorf("index: got %v, want 0.95", got)
	}
}

func TestJobFactors(t *testing.T) {
	t.Parallel()
	base := Result{Jobs: map[string]JobOutcome{"A": {JCT: 10}, "B": {JCT: 10}, "C": {JCT: 10}, "D": {JCT: 10}}}
	run := Result{Jobs: map[string]JobOutcome{"A": {JCT: 5}, "B": {JCT: 10}, "C": {JCT: 20}, "D": {JCT: 11}}}
	got := jobFactors(base, run)
	if !near(got.AtLeast1, 0.5) || !near(got.Below1, 0.5) || !near(got.Below08, 0.25) || !near(got.Min, 0.5) {
		t.Errorf("got %+v, want at least 1: 0.5, below 1: 0.5, below 0.8: 0.25, min 0.5", got)
	}
	if len(got.Deciles) != 9 || !near(got.Deciles[8], 2) || !near(got.Deciles[0], 0.5) {
		t.Errorf("deciles %v: want 9 from 0.5 to 2", got.Deciles)
	}
}

// A sweep runs each baseline once however many values it has, and the
// factors compare every scheduler with the first on the same workload.
func TestSweepCarbyne_Figure2(t *testing.T) {
	t.Parallel()
	cs, err := Sweep(fig2Config(SchedCarbyne), []string{SchedDRF, SchedCarbyne}, []uint64{1, 2, 3}, "altruism", []float64{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Value != 0 || cs[1].Value != 1 {
		t.Fatalf("got %d comparisons %+v", len(cs), cs)
	}
	if !reflect.DeepEqual(cs[0].Rows[0], cs[1].Rows[0]) {
		t.Errorf("drf differs between altruism values: %+v, %+v", cs[0].Rows[0], cs[1].Rows[0])
	}
	for _, c := range cs {
		r := c.Rows[1]
		if !near(r.AvgFactor, 2.05/1.55) || !near(r.AvgJCT, 1.55) || r.PerJob.AtLeast1 != 1 {
			t.Errorf("altruism %v: %+v; want average 1.55, factor 2.05/1.55, no job slower", c.Value, r)
		}
	}
	// Either way J2 is sped up (2.0 → 1.0) and J1 is not: altruistically
	// through leftover, greedily through the fair phase's order.
	for _, c := range cs {
		if got := c.Rows[1].PerJob.Deciles[8]; !near(got, 2) {
			t.Errorf("altruism %v, top decile: got %v, want 2", c.Value, got)
		}
	}

	var out bytes.Buffer
	if err := WriteComparison(&out, cs, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"altruism", "carbyne", "1.32", "altruism=1 carbyne:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSweepCarbyne_BadInput(t *testing.T) {
	t.Parallel()
	cfg := fig2Config(SchedCarbyne)
	if _, err := Sweep(cfg, []string{SchedDRF}, []uint64{1}, "weather", []float64{1}); err == nil {
		t.Error("unknown knob accepted")
	}
	if _, err := Sweep(cfg, nil, []uint64{1}, "", nil); err == nil {
		t.Error("no schedulers accepted")
	}
	if _, err := Compare(cfg, []string{SchedDRF, "fifo"}, []uint64{1}); err == nil {
		t.Error("unknown scheduler accepted")
	}
}

func TestCarbyneConfig_CanonicalDropsUnusedKnobs(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Altruism, cfg.Greedy, cfg.Misestimate = 0.5, 0.5, 20
	drf, sjf, wc := cfg, cfg, cfg
	drf.Scheduler, sjf.Scheduler, wc.Scheduler = SchedDRF, SchedSJF, SchedDRFWC
	if c := drf.canonical(); c.Altruism != 0 || c.Greedy != 0 || c.Misestimate != 0 || c.ShareInterval == 0 {
		t.Errorf("drf: %+v", c)
	}
	if c := sjf.canonical(); c.Misestimate != 20 || c.ShareInterval != 0 {
		t.Errorf("sjf: %+v", c)
	}
	if c := wc.canonical(); c.Misestimate != 0 || c.ShareInterval != 0 {
		t.Errorf("drf-wc: %+v", c)
	}
	if c := cfg.canonical(); c != cfg {
		t.Errorf("carbyne changed: %+v", c)
	}
}

func TestWriteCarbyneRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := WriteRun(&out, mustRun(t, fig2Config(SchedCarbyne))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"J1", "2.1", "average JCT 1.55 s", "leftover pool in the first round: 0.5 -> 0.21 -> 0",
		"after their first plan's T_k: 0 of 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestLeftoverSteps(t *testing.T) {
	t.Parallel()
	if got, want := leftoverSteps([]float64{0.5, 0.21, 0}), "0.5 -> 0.21 -> 0"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := []float64{1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1}
	if got, want := leftoverSteps(long), "1 -> 0.9 -> 0.8 -> 0.7 -> 0.6 -> 0.5 -> (3 more) -> 0.1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The shortfall index counts each job's usage against its entitlement,
// capped at 1. Through one window, A is entitled to 0.5 and holds 0.75
// (x = 1), B is entitled to 0.5 and holds 0.25 (x = 0.5), C is entitled
// to nothing (x = 1): (2.5)²/(3·2.25) = 0.926. The raw index over the same
// shares is (1)²/(3·(0.5625+0.0625)) = 0.533. In a second window every job
// holds exactly its entitlement: index 1.
func TestJainTracker_Shortfall(t *testing.T) {
	t.Parallel()
	tr := newJainTracker([]int64{100}, 3)
	end := 120 * time.Second
	a := &simJob{idx: 0, used: []int64{75}, finish: end}
	b := &simJob{idx: 1, used: []int64{25}, finish: end}
	c := &simJob{idx: 2, used: []int64{0}, finish: end}
	jobs := []*simJob{a, b, c}
	for _, j := range jobs {
		tr.set(j, 0)
	}
	tr.entitle(a, []int64{50}, 0)
	tr.entitle(b, []int64{50}, 0)
	tr.entitle(c, nil, 0)
	window := 60 * time.Second
	for _, j := range jobs {
		tr.advance(j, window)
	}
	a.used[0], b.used[0] = 50, 50
	for _, j := range jobs {
		tr.set(j, window)
	}
	for _, j := range jobs {
		tr.advance(j, end)
		tr.entitle(j, nil, end)
	}
	first := 2.5 * 2.5 / (3 * 2.25)
	if got, want := tr.shortfallIndex(jobs, end), (first+1)/2; !near(got, want) {
		t.Errorf("shortfall index: got %v, want %v", got, want)
	}
	// The raw index of the second window: shares 0.5, 0.5, 0.
	raw1, raw2 := 1.0/(3*(0.5625+0.0625)), 1.0/(3*0.5)
	if got, want := tr.index(jobs, end), (raw1+raw2)/2; !near(got, want) {
		t.Errorf("raw index: got %v, want %v", got, want)
	}
	// Nobody entitled to anything: no window counts, index 1.
	idle := newJainTracker([]int64{100}, 1)
	j := &simJob{idx: 0, used: []int64{10}, finish: end}
	idle.set(j, 0)
	idle.advance(j, end)
	if got := idle.shortfallIndex([]*simJob{j}, end); got != 1 {
		t.Errorf("no entitlement: got %v, want 1", got)
	}
}
