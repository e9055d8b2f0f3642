package coflowsim

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/coflow"
)

// The hand-checked cases of package coflow (coflow/baselines_test.go and
// coflow/philae_test.go), replayed through the simulator: sizes in MB, every
// port side at 1 MB/s, so a 3 MB flow alone takes 3 s.

type handFlow struct {
	src, dst int
	mb       float64
}

type handCoflow struct {
	id      string
	arrival float64 // seconds
	flows   []handFlow
}

func handTrace(ports int, cs ...handCoflow) *Trace {
	tr := &Trace{Ports: ports}
	for _, c := range cs {
		tc := TraceCoflow{ID: c.id, ArrivalMs: int64(c.arrival * 1e3), PerFlow: true}
		for _, f := range c.flows {
			tc.Flows = append(tc.Flows, TraceFlow{Src: f.src, Dst: f.dst, Bytes: int64(f.mb * MB)})
		}
		tr.Coflows = append(tr.Coflows, tc)
	}
	return tr
}

// handConfig is the coflow tests' testConfig: the paper's defaults at
// 1 MB/s, with a slot long enough that the rotation never leaves the top
// queue.
func handConfig(policy string) Config {
	cfg := DefaultConfig()
	cfg.Policy = policy
	cfg.Coflow.Capacity = MB
	cfg.Coflow.Slot = 1000 * time.Second
	return cfg
}

// mustEngine builds the simulator for tr under cfg.
func mustEngine(t *testing.T, tr *Trace, cfg Config) *engine {
	t.Helper()
	ccfg, err := cfg.coordinatorConfig(tr.Ports)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newEngine(tr, ccfg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runChecked runs with fastRates checked against coflow.Rates on every
// rate computation.
func runChecked(t *testing.T, tr *Trace, cfg Config) Result {
	t.Helper()
	s := mustEngine(t, tr, cfg)
	s.checkRates = true
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	return s.result()
}

func checkCCTs(t *testing.T, res Result, want map[string]float64) {
	t.Helper()
	for id, w := range want {
		if got := res.Coflows[id].CCTms / 1e3; math.Abs(got-w) > 1e-6 {
			t.Errorf("%s: CCT(%s) = %v s, want %v", res.Policy, id, got, w)
		}
	}
}

var threeCoflows = handTrace(4,
	handCoflow{"A", 0, []handFlow{{0, 2, 4}, {1, 3, 2}}},
	handCoflow{"B", 1, []handFlow{{0, 3, 1}}},
	handCoflow{"C", 2, []handFlow{{1, 2, 2}}},
)

func TestRunCoflowSim_HandCases(t *testing.T) {
	t.Parallel()
	bottleneck := handTrace(4,
		handCoflow{"X", 0, []handFlow{{0, 2, 2}, {1, 3, 2}}},
		handCoflow{"Y", 0, []handFlow{{0, 3, 3}}})
	madd := handTrace(4,
		handCoflow{"X", 0, []handFlow{{0, 2, 2}, {1, 2, 1}}},
		handCoflow{"Y", 0, []handFlow{{1, 3, 4}}})
	fair := handTrace(3,
		handCoflow{"A", 0, []handFlow{{0, 2, 3}}},
		handCoflow{"B", 0, []handFlow{{1, 2, 1}}},
		handCoflow{"C", 0, []handFlow{{0, 1, 2}}})
	for _, tc := range []struct {
		name   string
		policy string
		tr     *Trace
		want   map[string]float64
	}{
		{"fifo in arrival order", "fifo", threeCoflows, map[string]float64{"A": 4, "B": 4, "C": 4}},
		{"scf by total size", "scf", threeCoflows, map[string]float64{"A": 7, "B": 1, "C": 2}},
		{"scf: total size", "scf", bottleneck, map[string]float64{"X": 5, "Y": 3}},
		{"sebf: bottleneck", "sebf", bottleneck, map[string]float64{"X": 2, "Y": 5}},
		{"sebf: MADD", "sebf", madd, map[string]float64{"X": 3, "Y": 5}},
		{"fair: max-min", "fair", fair, map[string]float64{"A": 5, "B": 2, "C": 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkCCTs(t, runChecked(t, tc.tr, handConfig(tc.policy)), tc.want)
		})
	}
}

func TestRunCoflowSim_AaloDemotesOnReports(t *testing.T) {
	t.Parallel()
	// A at t=0: 0→1 5 MB; B at t=1: 0→2 1 MB; queue 0 ends at 2 MB and the
	// agents report every δ = 1 s. A is demoted by the report at t=2, so B
	// runs 2..3 (CCT 2) and A finishes at 6; the oracle puts A in queue 1
	// from the start, so B runs at once (CCT 1). FIFO: 5 and 5.
	tr := handTrace(3,
		handCoflow{"A", 0, []handFlow{{0, 1, 5}}},
		handCoflow{"B", 1, []handFlow{{0, 2, 1}}})
	for _, tc := range []struct {
		policy string
		want   map[string]float64
	}{
		{"aalo", map[string]float64{"A": 6, "B": 2}},
		{"aalo-oracle", map[string]float64{"A": 6, "B": 1}},
		{"fifo", map[string]float64{"A": 5, "B": 5}},
	} {
		cfg := handConfig(tc.policy)
		cfg.Coflow.Slot = time.Second
		cfg.Coflow.FirstQueueLimit = 2 * MB
		checkCCTs(t, runChecked(t, tr, cfg), tc.want)
	}
}

func TestRunCoflowSim_PhilaePolicies(t *testing.T) {
	t.Parallel()
	// coflow's TestPhilae_PolicyOrdering: T = 1, no work conservation,
	// Q0 = [0, 22 MB). Policies A and B run Y first at t=8 (X 13, Y 10); B
	// with FIFO queues, C and D run X first (X 12, Y 11).
	x := handCoflow{"X", 0, nil}
	for s := range 3 {
		for r := range 3 {
			x.flows = append(x.flows, handFlow{s, 3 + r, 3})
		}
	}
	tr := handTrace(8, x, handCoflow{"Y", 0, []handFlow{{6, 3, 2}, {6, 7, 8}}})
	for _, tc := range []struct {
		policy       string
		fifo         bool
		wantX, wantY float64
	}{
		{"philae-A", false, 13, 10}, {"philae-B", false, 13, 10}, {"philae-B", true, 12, 11},
		{"philae-C", false, 12, 11}, {"philae-D", false, 12, 11},
	} {
		cfg := handConfig(tc.policy)
		cfg.Coflow.ThinLimit, cfg.Coflow.WorkConserving = 1, false
		cfg.Coflow.QueueFIFO = tc.fifo
		cfg.Coflow.FirstQueueLimit = 22 * MB
		res := runChecked(t, tr, cfg)
		checkCCTs(t, res, map[string]float64{"X": tc.wantX, "Y": tc.wantY})
		if tc.policy != "philae-C" && (res.Estimation == nil || res.Estimation.Coflows != 2) {
			t.Errorf("%s: estimation %+v, want two piloted coflows", tc.policy, res.Estimation)
		}
	}
	// Work conservation (coflow's TestPhilae_ThinBypassAndWorkConservation):
	// A at t=0: 0→2 2 MB, 1→3 2 MB, piloted (T = 0): 2 s with it, 4 without.
	pair := handTrace(4, handCoflow{"A", 0, []handFlow{{0, 2, 2}, {1, 3, 2}}})
	for _, wc := range []bool{true, false} {
		cfg := handConfig("philae")
		cfg.Coflow.ThinLimit, cfg.Coflow.WorkConserving = 0, wc
		want := map[bool]float64{true: 2, false: 4}[wc]
		checkCCTs(t, runChecked(t, pair, cfg), map[string]float64{"A": want})
	}
}

func TestRunCoflowSim_Quantum(t *testing.T) {
	t.Parallel()
	// With a 1.5 s quantum, FIFO on threeCoflows: A's 1→3 ends at 2 but its
	// ports idle until 3 (nothing waits for them); A's 0→2 ends at 4, and B
	// and C, admitted at 1.5 and 3, start at 4.5: B ends at 5.5 (CCT 4.5),
	// C at 6.5 (CCT 4.5). Event-driven gives 4, 4, 4.
	cfg := handConfig("fifo")
	cfg.Quantum = 1500 * time.Millisecond
	checkCCTs(t, runChecked(t, threeCoflows, cfg), map[string]float64{"A": 4, "B": 4.5, "C": 4.5})
}

func TestRunCoflowSim_BadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"unknown policy", func(c *Config) { c.Policy = "sjf" }},
		{"unknown philae policy", func(c *Config) { c.Policy = "philae-E" }},
		{"pilot fraction", func(c *Config) { c.Coflow.PilotFraction = 0 }},
		{"negative quantum", func(c *Config) { c.Quantum = -time.Second }},
	} {
		cfg := handConfig("philae")
		tc.edit(&cfg)
		if _, err := Run(threeCoflows, cfg); !errors.Is(err, ErrBadSimulation) {
			t.Errorf("%s: got %v, want ErrBadSimulation", tc.name, err)
		}
	}
}

// fbPrefix is the coflows of at most 1,000 flows among the first n of
// FB2010 (the larger ones make sebf and fair, and the rate cross-check,
// too slow for a unit test).
func fbPrefix(t testing.TB, n int) *Trace {
	tr := fb2010(t)
	small := tr.Coflows[:0]
	for _, c := range tr.Coflows[:n] {
		if len(c.Flows) <= 1000 {
			small = append(small, c)
		}
	}
	tr.Coflows = small
	return tr
}

func TestRunCoflowSim_FB2010PrefixEveryPolicy(t *testing.T) {
	t.Parallel()
	tr := fbPrefix(t, 200)
	for _, p := range Policies() {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.Policy = p
			res := runChecked(t, tr, cfg)
			if len(res.Coflows) != len(tr.Coflows) {
				t.Fatalf("%d coflows finished, want %d", len(res.Coflows), len(tr.Coflows))
			}
			for id, c := range res.Coflows {
				// No coflow beats its bottleneck port at line rate.
				lower := 0.0
				send, recv := map[int]int64{}, map[int]int64{}
				for _, f := range tr.Coflows[indexOf(tr, id)].Flows {
					send[f.Src] += f.Bytes
					recv[f.Dst] += f.Bytes
				}
				for _, b := range send {
					lower = max(lower, float64(b)/125e6*1e3)
				}
				for _, b := range recv {
					lower = max(lower, float64(b)/125e6*1e3)
				}
				if c.CCTms < lower*(1-1e-9) {
					t.Errorf("coflow %s: CCT %v ms below its bottleneck %v ms", id, c.CCTms, lower)
				}
			}
			if res.Load.Completions != tr.Shape().Flows {
				t.Errorf("%d completions, want %d", res.Load.Completions, tr.Shape().Flows)
			}
		})
	}
}

func indexOf(tr *Trace, id string) int {
	for i := range tr.Coflows {
		if tr.Coflows[i].ID == id {
			return i
		}
	}
	return -1
}

func TestRunCoflowSim_Deterministic(t *testing.T) {
	t.Parallel()
	tr := fbPrefix(t, 200)
	for _, p := range []string{"philae", "aalo"} {
		cfg := DefaultConfig()
		cfg.Policy = p
		a, err := Run(tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs differ", p)
		}
	}
}

func TestCompareCoflow_Factors(t *testing.T) {
	t.Parallel()
	// FIFO against SCF on threeCoflows: averages 4 and 10/3; per coflow
	// SCF over FIFO A 7/4, B 1/4, C 2/4.
	c, err := Compare(threeCoflows, handConfig("fifo"), []string{"fifo", "scf"}, false)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Rows[1]
	if math.Abs(r.AvgFactor-(10.0/3)/4) > 1e-9 || math.Abs(r.P50Factor-0.5) > 1e-9 || math.Abs(r.P90Factor-1.75) > 1e-9 {
		t.Errorf("scf against fifo: %+v, want avg %v, p50 0.5, p90 1.75", r, (10.0/3)/4)
	}
	inv, err := Compare(threeCoflows, handConfig("fifo"), []string{"fifo", "scf"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if r := inv.Rows[1]; math.Abs(r.AvgFactor-4/(10.0/3)) > 1e-9 || math.Abs(r.P90Factor-4) > 1e-9 {
		t.Errorf("inverted: %+v, want avg %v, p90 4", r, 4/(10.0/3))
	}
	if _, err := Compare(threeCoflows, handConfig("fifo"), []string{"fifo", "nope"}, false); !errors.Is(err, ErrBadSimulation) {
		t.Errorf("unknown policy: got %v, want ErrBadSimulation", err)
	}
	sw, err := Sweep(threeCoflows, handConfig("fifo"), []string{"fifo", "philae"}, false, "thin-limit", []float64{0, 7})
	if err != nil || len(sw) != 2 || sw[1].Value != 7 {
		t.Errorf("sweep: %v, %+v", err, sw)
	}
	if _, err := Sweep(threeCoflows, handConfig("fifo"), []string{"fifo"}, false, "colour", []float64{1}); !errors.Is(err, ErrBadSimulation) {
		t.Errorf("unknown knob: got %v, want ErrBadSimulation", err)
	}
}

var _ coflow.FinishedFlows = (*engine)(nil)
