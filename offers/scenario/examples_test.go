package scenario

// The worked examples of docs/hdrf.md, with the exact task counts that
// page gives, for the policies it gives them for. "oracle" rows run the
// independent static H-DRF oracle of oracle_static_test.go, so the expected
// values also validate it. Churned rows run churnN random completions with a
// fixed seed, refilling after each. T-DOVE and T-IDLE are in
// examples_tdove_test.go.

import (
	"testing"

	"github.com/allot-project/allot/offers"
)

// ---------------------------------------------------------------------------
// The H-DRF paper's Figure 3: flat DRF.

func fig3() Spec {
	return tree(res{"mem": 100, "cpus": 100},
		lf("j1", res{"mem": 3, "cpus": 2}),
		lf("j2", res{"mem": 2, "cpus": 3}))
}

func TestFigure3_FlatDRF(t *testing.T) {
	all := append(pols(oracle), offers.Policies()...)
	runExamples(t, []example{
		{"R100", fig3(), all, 0, want([]int64{20, 20})},
		{"R100", fig3(), offers.Policies(), churnN, want([]int64{20, 20})},
	})
	r := mustRun(t, fig3(), dynamic)
	j1, j2 := r.Shares("j1"), r.Shares("j2")
	if !near(j1["mem"], 0.6) || !near(j1["cpus"], 0.4) || !near(j2["mem"], 0.4) || !near(j2["cpus"], 0.6) {
		t.Errorf("shares: got j1 %v j2 %v, want j1 <0.6,0.4> j2 <0.4,0.6>", j1, j2)
	}
}

// ---------------------------------------------------------------------------
// The H-DRF paper's Figure 2: single resource, weights.

func fig2() Spec {
	one := res{"slots": 1}
	return tree(res{"slots": 480},
		grp("n1", 1, lf("n1.1", one)),
		grp("n2", 1,
			lf("n2.1", one),
			grp("n2.2", 2, lf("n2.2.1", one)),
			lfw("n2.3", 2, one)))
}

// fig2Idle keeps n2,3 in the tree with no tasks: it is not demanding.
func fig2Idle() Spec {
	s := fig2()
	s.Root.Children[1].Children[2].Tasks = 0
	return s
}

func TestFigure2_Weights(t *testing.T) {
	fill := pols(oracle, static, dynamic, paper, naive, collapsed)
	churn := pols(static, dynamic, paper, naive, collapsed)
	runExamples(t, []example{
		{"all", fig2(), fill, 0, want([]int64{240, 48, 96, 96})},
		{"all", fig2(), churn, churnN, want([]int64{240, 48, 96, 96})},
		{"without_n2.3", without(fig2(), "n2.3"), fill, 0, want([]int64{240, 80, 160})},
		{"without_n2.3", without(fig2(), "n2.3"), churn, churnN, want([]int64{240, 80, 160})},
		{"idle_n2.3", fig2Idle(), fill, 0, want([]int64{240, 80, 160, 0})},
	})
}

// ---------------------------------------------------------------------------
// The H-DRF paper's Figure 1: organizational hierarchy, derived tests.

func fig1Single() Spec {
	one := res{"cpus": 1}
	return tree(res{"cpus": 1000},
		grp("ads", 60, lfw("ads.prod", 70, one), lfw("ads.test", 30, one)),
		grp("dev", 40, lfw("dev.prod", 50, one), lfw("dev.test", 50, one)))
}

func fig1Multi() Spec {
	return tree(res{"cpus": 100, "gpus": 100},
		grp("ads", 60, lfw("ads.prod", 70, res{"cpus": 1}), lfw("ads.test", 30, res{"gpus": 1})),
		grp("dev", 40, lfw("dev.prod", 50, res{"cpus": 1}), lfw("dev.test", 50, res{"cpus": 1, "gpus": 1})))
}

func TestFigure1_SingleResource(t *testing.T) {
	fill := pols(oracle, static, dynamic, paper, naive, collapsed)
	churn := pols(static, dynamic, paper, naive, collapsed)
	runExamples(t, []example{
		{"all", fig1Single(), fill, 0, want([]int64{420, 180, 200, 200})},
		{"all", fig1Single(), churn, churnN, want([]int64{420, 180, 200, 200})},
		{"no_ads.test", without(fig1Single(), "ads.test"), fill, 0, want([]int64{600, 200, 200})},
		{"no_ads.test", without(fig1Single(), "ads.test"), churn, churnN, want([]int64{600, 200, 200})},
	})
}

func TestFigure1_MultiResource(t *testing.T) {
	runExamples(t, []example{
		{"hdrf", fig1Multi(), pols(oracle, static, dynamic, paper), 0, want([]int64{60, 80, 20, 20})},
		{"hdrf", fig1Multi(), pols(static, dynamic, paper), churnN, want([]int64{60, 80, 20, 20})},
		{"naive", fig1Multi(), pols(naive), churnN, want([]int64{46, 80, 34, 20})},
	})
}

// ---------------------------------------------------------------------------
// The H-DRF paper's Figure 4.

func fig4R(c int64) Spec {
	return tree(res{"cpus": c, "gpus": c},
		grp("n1", 1, lf("n1.1", res{"cpus": 1})),
		grp("n2", 1, lf("n2.1", res{"cpus": 1}), lf("n2.2", res{"gpus": 1})))
}

func TestFigure4_Static(t *testing.T) {
	every := pols(oracle, static, dynamic, paper, naive)
	runExamples(t, []example{
		{"R10", fig4R(10), every, 0, want([]int64{5, 5, 10})},
		{"R100", fig4R(100), every, 0, want([]int64{50, 50, 100})},
	})
}

func TestFigure4_Churn(t *testing.T) {
	runExamples(t, []example{
		{"R10", fig4R(10), hdrf, churnN, want([]int64{5, 5, 10})},
		{"R10", fig4R(10), pols(naive), churnN, want([]int64{10, 0, 10})},
		{"R100", fig4R(100), hdrf, churnN, want([]int64{50, 50, 100})},
	})
}

// TestFigure4_NaiveStarvesStepByStep removes one n2,1 task at a time: under
// naive the CPU goes to n1,1 each time (5+k / 5-k); under H-DRF it comes
// back to n2,1.
func TestFigure4_NaiveStarvesStepByStep(t *testing.T) {
	for _, p := range append(pols(naive), hdrf...) {
		t.Run(string(p), func(t *testing.T) {
			r := mustRun(t, fig4R(10), p)
			rng := newRNG(7)
			for k := int64(1); k <= 5; k++ {
				if completeWhere(t, r, rng, func(l string) bool { return l == "n2.1" }) == "" {
					t.Fatalf("k=%d: n2.1 runs nothing", k)
				}
				if _, err := r.Fill(); err != nil {
					t.Fatal(err)
				}
				w := []int64{5, 5, 10}
				if p == naive {
					w = []int64{5 + k, 5 - k, 10}
				}
				if got := counts(r); !matchesAny(got, want(w)) {
					t.Fatalf("after %d n2.1 completions: got %s, want %s", k, fmtCounts(got), fmtCounts(w))
				}
			}
		})
	}
}

// TestFigure4_SharesAfterCompletion: right after one n2,1 completion the
// literal rule sees n1 0.5 and n2 0.4 (GPU saturated, n2,2 ignored), the
// scale-down rule n2 0.4 too; naive sees n2 at 1.0.
func TestFigure4_SharesAfterCompletion(t *testing.T) {
	for _, tc := range []struct {
		p      offers.Policy
		n1, n2 float64
	}{{paper, 0.5, 0.4}, {dynamic, 0.5, 0.4}, {naive, 0.5, 1.0}} {
		r := mustRun(t, fig4R(10), tc.p)
		if completeWhere(t, r, newRNG(1), func(l string) bool { return l == "n2.1" }) == "" {
			t.Fatal("n2.1 runs nothing")
		}
		if n1, n2 := policyShare(t, r, "n1"), policyShare(t, r, "n2"); !near(n1, tc.n1) || !near(n2, tc.n2) {
			t.Errorf("%s: got n1 %.3f n2 %.3f, want n1 %.3f n2 %.3f", tc.p, n1, n2, tc.n1, tc.n2)
		}
	}
}

// ---------------------------------------------------------------------------
// Collapsed hierarchies.

func collapsedTree() Spec {
	return tree(res{"cpus": 30, "gpus": 30},
		grp("n1", 1, lf("n1.1", res{"cpus": 1, "gpus": 1})),
		grp("n2", 1, lf("n2.1", res{"cpus": 1}), lf("n2.2", res{"gpus": 1})))
}

func collapsedControl() Spec {
	return tree(res{"cpus": 100, "gpus": 100},
		grp("n1", 1, lf("n1.1", res{"cpus": 1})),
		grp("n2", 1, lf("n2.1", res{"cpus": 1}), lf("n2.2", res{"cpus": 1})))
}

func TestCollapsed_Dovetailing(t *testing.T) {
	runExamples(t, []example{
		{"collapsed", collapsedTree(), pols(collapsed), 0, want([]int64{20, 10, 10})},
		{"collapsed", collapsedTree(), pols(collapsed), churnN, want([]int64{20, 10, 10})},
		{"hdrf", collapsedTree(), append(pols(oracle), hdrf...), 0, want([]int64{15, 15, 15})},
		{"hdrf", collapsedTree(), hdrf, churnN, want([]int64{15, 15, 15})},
	})
	for _, tc := range []struct {
		p  offers.Policy
		n2 float64
	}{{collapsed, 1.0 / 3}, {dynamic, 0.5}, {static, 0.5}} {
		r := mustRun(t, collapsedTree(), tc.p)
		if got := roleShare(t, r, "n2"); !near(got, tc.n2) {
			t.Errorf("%s: n2 share got %.4f, want %.4f (guarantee 0.5)", tc.p, got, tc.n2)
		}
	}
}

func TestCollapsed_SingleResourceControl(t *testing.T) {
	ps := append(pols(oracle, collapsed), hdrf...)
	runExamples(t, []example{
		{"R100", collapsedControl(), ps, 0, want([]int64{50, 25, 25})},
		{"R100", collapsedControl(), ps[1:], churnN, want([]int64{50, 25, 25})},
	})
}

// ---------------------------------------------------------------------------
// The H-DRF paper's Figure 5.

func fig5R(c int64) Spec {
	cpu, gpu := res{"cpus": 1}, res{"gpus": 1}
	return tree(res{"cpus": c, "gpus": c},
		grp("n1", 1, lf("n1.1", cpu)),
		grp("n2", 1, lf("n2.1", cpu)),
		grp("n3", 1, lf("n3.1", cpu), lf("n3.2", gpu)),
		grp("n4", 1, lf("n4.1", gpu)))
}

func TestFigure5_RescalingAloneFails(t *testing.T) {
	runExamples(t, []example{
		{"R30", fig5R(30), append(pols(oracle), hdrf...), 0, want([]int64{10, 10, 10, 15, 15})},
		{"R30", fig5R(30), hdrf, churnN, want([]int64{10, 10, 10, 15, 15})},
		{"R6", fig5R(6), append(pols(oracle), hdrf...), 0, want([]int64{2, 2, 2, 3, 3})},
		{"R6", fig5R(6), hdrf, churnN, want([]int64{2, 2, 2, 3, 3})},
		{"R30", fig5R(30), pols(naive), churnN, want([]int64{15, 15, 0, 15, 15})},
	})
}

// ---------------------------------------------------------------------------
// Blocked-only: Figure 4 with n2,1 = <1, 0.01>, every quantity x100.

func blockedOnly() Spec {
	return tree(res{"cpus": 10000, "gpus": 10000},
		grp("n1", 1, lf("n1.1", res{"cpus": 100})),
		grp("n2", 1, lf("n2.1", res{"cpus": 100, "gpus": 1}), lf("n2.2", res{"gpus": 100})))
}

func TestBlockedOnly_Epsilon(t *testing.T) {
	runExamples(t, []example{
		{"hdrf", blockedOnly(), append(pols(oracle), hdrf...), 0, want([]int64{50, 50, 99})},
		{"hdrf", blockedOnly(), hdrf, churnN, want([]int64{50, 50, 99})},
		{"naive", blockedOnly(), pols(naive), churnN, want([]int64{100, 0, 100})},
	})
}

// ---------------------------------------------------------------------------
// The H-DRF paper's Figures 6/7: population monotonicity fails.

func fig6R(c int64) Spec {
	return tree(res{"cpus": c, "gpus": c},
		grp("n1", 1, lf("n1.1", res{"cpus": 3, "gpus": 2})),
		grp("n2", 1, lf("n2.1", res{"cpus": 1, "gpus": 1}), lf("n2.2", res{"cpus": 1, "gpus": 3})))
}

func TestFigure6and7_PopulationMonotonicity(t *testing.T) {
	ps := append(pols(oracle), hdrf...)
	runExamples(t, []example{
		{"R60", fig6R(60), ps, 0, want([]int64{12, 18, 6})},
		{"R60", fig6R(60), hdrf, churnN, want([]int64{12, 18, 6})},
		{"R60_without_n2.2", without(fig6R(60), "n2.2"), ps, 0, want([]int64{10, 30})},
		{"R60_without_n2.2", without(fig6R(60), "n2.2"), hdrf, churnN, want([]int64{10, 30})},
		{"R100", fig6R(100), ps, 0, want([]int64{20, 30, 10})},
		{"R100", fig6R(100), hdrf, churnN, want([]int64{20, 30, 10})},
		{"R100_without_n2.2", without(fig6R(100), "n2.2"), ps, 0, want([]int64{17, 49})},
	})
	// P10: n1's share drops from 0.6 to 0.5 when n2,2 leaves.
	for _, p := range hdrf {
		before := roleShare(t, mustRun(t, fig6R(60), p), "n1")
		after := roleShare(t, mustRun(t, without(fig6R(60), "n2.2"), p), "n1")
		if !near(before, 0.6) || !near(after, 0.5) {
			t.Errorf("%s: n1 share got %.3f -> %.3f, want 0.6 -> 0.5", p, before, after)
		}
	}
}

// ---------------------------------------------------------------------------
// The H-DRF paper's Figure 8: weights 4:1, three resources <mem, cpus, gpus>.

func fig8R(mem, cpus, gpus int64) Spec {
	cpuTask := res{"mem": 1, "cpus": 1}
	return tree(res{"mem": mem, "cpus": cpus, "gpus": gpus},
		grp("n1", 4, lf("n1.1", cpuTask), lf("n1.2", res{"mem": 1, "gpus": 1})),
		grp("n2", 1, lf("n2.1", cpuTask), lf("n2.2", cpuTask)))
}

func TestFigure8_Weighted(t *testing.T) {
	ps := append(pols(oracle), hdrf...)
	f8 := fig8R(800, 200, 200)
	no11 := without(f8, "n1.1")
	no11n22 := without(f8, "n1.1", "n2.2")
	// The paper's cluster: the discrete result with leftmost ties is
	// 157/196/20/19 (fluid 156.8/196/19.6/19.6); static must give exactly
	// that. The last CPUs go through a near-tie between n1 (0.8/4) and n2
	// (0.2/1) that the rescaling rules (dynamic and paper, identically)
	// resolve the other way: 156/196/20/20, within one task of the fluid
	// result but not the leftmost-ties result.
	paperCluster := want([]int64{157, 196, 20, 19})
	paperClusterDyn := want([]int64{157, 196, 20, 19}, []int64{156, 196, 20, 20})
	pc := fig8R(784, 196, 196)
	pc49 := pc
	pc49.Agents = 49
	runExamples(t, []example{
		{"R800", f8, ps, 0, want([]int64{160, 200, 20, 20})},
		{"R800", f8, hdrf, churnN, want([]int64{160, 200, 20, 20})},
		{"R800_without_n1.1", no11, ps, 0, want([]int64{200, 100, 100})},
		{"R800_without_n1.1", no11, hdrf, churnN, want([]int64{200, 100, 100})},
		{"R800_without_n1.1_n2.2", no11n22, ps, 0, want([]int64{200, 200})},
		{"R800_without_n1.1_n2.2", no11n22, hdrf, churnN, want([]int64{200, 200})},
		{"R800", f8, pols(naive), churnN, want([]int64{150, 200, 25, 25})},
		{"paper_cluster", pc, pols(oracle, static), 0, paperCluster},
		{"paper_cluster", pc, pols(static), churnN, paperCluster},
		{"paper_cluster", pc, pols(dynamic, paper), 0, paperClusterDyn},
		{"paper_cluster", pc, pols(dynamic, paper), churnN, paperClusterDyn},
		{"paper_cluster_49_agents", pc49, pols(static), 0, paperCluster},
		{"paper_cluster_49_agents", pc49, pols(dynamic, paper), 0, paperClusterDyn},
	})
	// P9: 0.8 / 0.1 / 0.1 of CPU, n1,2 all GPUs (dynamic also under churn).
	for _, tc := range []struct {
		p     offers.Policy
		churn int
	}{{static, 0}, {dynamic, 0}, {paper, 0}, {dynamic, churnN}} {
		p := tc.p
		r := mustRun(t, f8, p)
		mustChurn(t, r, tc.churn, churnSeed)
		got := []float64{r.Shares("n1.1")["cpus"], r.Shares("n2.1")["cpus"], r.Shares("n2.2")["cpus"], r.Shares("n1.2")["gpus"]}
		if !near(got[0], 0.8) || !near(got[1], 0.1) || !near(got[2], 0.1) || !near(got[3], 1) {
			t.Errorf("%s: got CPU shares %.3f/%.3f/%.3f and n1.2 GPU %.3f, want 0.8/0.1/0.1 and 1.0", p, got[0], got[1], got[2], got[3])
		}
	}
}
