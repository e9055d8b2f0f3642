package scenario

import (
	"testing"
	"time"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// T-DOVE and T-IDLE (docs/hdrf.md), rows like those of examples_test.go.

func tDove() Spec {
	return tree(res{"cpus": 30, "gpus": 30},
		grp("n1", 1, lf("n1.1", res{"cpus": 1})),
		grp("n2", 1, lf("n2.1", res{"cpus": 1}), lf("n2.2", res{"gpus": 1}), lf("n2.3", res{"gpus": 1})))
}

func TestTDove(t *testing.T) {
	runExamples(t, []example{
		{"fill", tDove(), append(pols(oracle), hdrf...), 0, want([]int64{20, 10, 15, 15})},
		{"steady", tDove(), pols(static, dynamic), churnN, want([]int64{20, 10, 15, 15})},
	})
}

// TestTDove_PaperDrifts: the literal rule moves the CPU of one n1,1
// completion to n2,1 (19/11) and drifts to 15/15/15/15 under churn.
func TestTDove_PaperDrifts(t *testing.T) {
	r := mustRun(t, tDove(), paper)
	if completeWhere(t, r, newRNG(3), func(l string) bool { return l == "n1.1" }) == "" {
		t.Fatal("n1.1 runs nothing")
	}
	if _, err := r.Fill(); err != nil {
		t.Fatal(err)
	}
	if got, w := counts(r), []int64{19, 11, 15, 15}; !matchesAny(got, want(w)) {
		t.Errorf("paper after one n1.1 completion: got %s, want %s", fmtCounts(got), fmtCounts(w))
	}
	mustChurn(t, r, churnN, churnSeed)
	if got, w := counts(r), []int64{15, 15, 15, 15}; maxDiff(got, w) > 1 {
		t.Errorf("paper under churn: got %s, want %s (±1 per leaf)", fmtCounts(got), fmtCounts(w))
	}
}

// tIdle: Figure 4 on <10 CPU, 12 GPU>; n2,2 runs exactly 10 tasks and then
// has nothing pending.
func tIdle() Spec {
	s := tree(res{"cpus": 10, "gpus": 12},
		grp("n1", 1, lf("n1.1", res{"cpus": 1})),
		grp("n2", 1, lf("n2.1", res{"cpus": 1}), lf("n2.2", res{"gpus": 1})))
	s.Root.Children[1].Children[1].Tasks = 10
	return s
}

// churnOnly completes n random tasks of the given leaves, refilling after
// each.
func churnOnly(t *testing.T, r *Run, n int, seed uint64, leaves ...string) {
	t.Helper()
	rng := newRNG(seed)
	keep := func(l string) bool {
		for _, x := range leaves {
			if x == l {
				return true
			}
		}
		return false
	}
	for i := 0; i < n; i++ {
		if completeWhere(t, r, rng, keep) == "" {
			t.Fatalf("completion %d: none of %v runs a task (counts %s)", i, leaves, r.Counts())
		}
		if _, err := r.Fill(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTIdle(t *testing.T) {
	runExamples(t, []example{
		{"fill", tIdle(), pols(oracle, static, dynamic, paper, naive), 0, want([]int64{5, 5, 10})},
	})
	for _, tc := range []struct {
		p       offers.Policy
		starved bool
	}{{static, false}, {dynamic, false}, {paper, true}, {naive, true}} {
		t.Run(string(tc.p)+"/churn", func(t *testing.T) {
			r := mustRun(t, tIdle(), tc.p)
			churnOnly(t, r, churnN, churnSeed, "n1.1", "n2.1")
			got := counts(r)
			if got[2] != 10 {
				t.Errorf("n2.2 got %d tasks, want 10", got[2])
			}
			if !tc.starved {
				if w := []int64{5, 5, 10}; !matchesAny(got, want(w)) {
					t.Errorf("got %s, want %s", fmtCounts(got), fmtCounts(w))
				}
				return
			}
			// Literal and naive: n1,1 about 9, n2,1 about 1.
			if got[0] < 8 || got[1] > 2 {
				t.Errorf("got %s, want about 9/1/10 (n2.1 starved)", fmtCounts(got))
			}
		})
	}
}

// TestTIdle_OffersAPI replays T-IDLE on the allocator's own API (agents,
// frameworks, demand, Allocate/Accept/Recover), completing only n1,1 and
// n2,1 tasks, without the scenario harness.
func TestTIdle_OffersAPI(t *testing.T) {
	demand := map[protocol.FrameworkID]protocol.Resources{
		"n1.1": protocol.Scalars(res{"cpus": 1}),
		"n2.1": protocol.Scalars(res{"cpus": 1}),
		"n2.2": protocol.Scalars(res{"gpus": 1}),
	}
	for _, tc := range []struct {
		p       offers.Policy
		starved bool
	}{{dynamic, false}, {static, false}, {paper, true}, {naive, true}} {
		t.Run(string(tc.p), func(t *testing.T) {
			cfg := offers.DefaultConfig()
			cfg.Policy = tc.p
			cfg.OfferTimeout = 0
			a, err := offers.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(a.AddAgent(offers.AgentInfo{ID: "a1", Hostname: "a1", Total: protocol.Scalars(res{"cpus": 10, "gpus": 12})}))
			for _, f := range []struct {
				id    protocol.FrameworkID
				role  string
				count int64
			}{{"n1.1", "n1", offers.Unlimited}, {"n2.1", "n2", offers.Unlimited}, {"n2.2", "n2", 10}} {
				must(a.AddFramework(offers.FrameworkInfo{ID: f.id, Role: f.role}))
				must(a.SetDemand(f.id, []offers.Demand{{Resources: demand[f.id], Count: f.count}}))
			}
			now := time.Unix(0, 0)
			running := map[protocol.FrameworkID]int64{}
			fill := func() {
				t.Helper()
				for {
					now = now.Add(time.Millisecond)
					d := a.Allocate(now)
					if len(d.Offers) == 0 {
						return
					}
					for _, o := range d.Offers {
						launches := make([]protocol.Resources, o.Tasks)
						for i := range launches {
							launches[i] = demand[o.FrameworkID]
						}
						if _, err := a.Accept(o.FrameworkID, []protocol.OfferID{o.ID}, launches, now); err != nil {
							t.Fatal(err)
						}
						running[o.FrameworkID] += o.Tasks
					}
				}
			}
			got := func() []int64 { return []int64{running["n1.1"], running["n2.1"], running["n2.2"]} }
			fill()
			if w := []int64{5, 5, 10}; !matchesAny(got(), want(w)) {
				t.Fatalf("fill: got %s, want %s", fmtCounts(got()), fmtCounts(w))
			}
			rng := newRNG(churnSeed)
			for i := 0; i < churnN; i++ {
				id := protocol.FrameworkID("n1.1")
				if rng.Int64N(running["n1.1"]+running["n2.1"]) >= running["n1.1"] {
					id = "n2.1"
				}
				must(a.Recover(id, "a1", demand[id]))
				running[id]--
				fill()
			}
			g := got()
			switch {
			case g[2] != 10:
				t.Errorf("n2.2 got %d tasks, want 10", g[2])
			case !tc.starved && !matchesAny(g, want([]int64{5, 5, 10})):
				t.Errorf("got %s, want 5/5/10", fmtCounts(g))
			case tc.starved && (g[0] < 8 || g[1] > 2):
				t.Errorf("got %s, want about 9/1/10 (n2.1 starved)", fmtCounts(g))
			}
		})
	}
}
