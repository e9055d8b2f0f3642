package altruism

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// The Figure 2 example of the Carbyne paper, as rebuilt in docs/carbyne.md: one
// machine with one resource of capacity 1.0 (1000 milli-CPU here, so 0.21
// is 210), two jobs arriving at t=0, time unit one second.

var fig2Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const fig2Capacity = 1000

func cpus(n int64) protocol.Resources { return protocol.Scalars(map[string]int64{protocol.ResCPUs: n}) }

// fig2J1 is J1: S0 2×0.04 and S1 3×0.21 for 1.0 each, then the barrier S2,
// one task of demand d for 0.1.
func fig2J1(t *testing.T, d int64) *Job {
	t.Helper()
	j, err := NewJob(JobSpec{Stages: []StageSpec{
		{Name: "S0", Tasks: 2, Demand: cpus(40), Duration: time.Second},
		{Name: "S1", Tasks: 3, Demand: cpus(210), Duration: time.Second},
		{Name: "S2", Tasks: 1, Demand: cpus(d), Duration: 100 * time.Millisecond, Parents: []string{"S0", "S1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// fig2J2 is J2: two independent tasks of 0.29 for 1.0 each.
func fig2J2(t *testing.T) *Job {
	t.Helper()
	j, err := NewJob(JobSpec{Stages: []StageSpec{
		{Name: "S0", Tasks: 2, Demand: cpus(290), Duration: time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestFigure2_AltruisticPlansAtZero(t *testing.T) {
	p := mustPlanner(t, DefaultConfig())
	j1, j2 := fig2J1(t, 200), fig2J2(t)
	for _, j := range []*Job{j1, j2} {
		if err := j.ShareChanged(cpus(500)); err != nil { // A_1 = A_2 = 0.5, L_DRF = 0
			t.Fatal(err)
		}
	}
	d1 := mustPlan(t, p, j1, fig2Start, 0)
	d2 := mustPlan(t, p, j2, fig2Start, 0)

	if !d1.Altruistic || !d2.Altruistic {
		t.Fatalf("altruistic = %v, %v; want true, true", d1.Altruistic, d2.Altruistic)
	}
	wantDur(t, "T_1", d1.Completion, 2100*time.Millisecond)
	wantDur(t, "T_2", d2.Completion, 2*time.Second)
	// Reverse pack of J1: S2 at Rev 0, S1×2 and S0×2 at Rev 0.1, the third
	// S1 at Rev 1.1; latest start = T_1 − Rev − Dur.
	wantLatest(t, d1, map[TaskID]time.Duration{
		{"S2", 0}: 2 * time.Second,
		{"S0", 0}: time.Second, {"S0", 1}: time.Second,
		{"S1", 0}: 0, {"S1", 1}: time.Second, {"S1", 2}: time.Second,
	})
	wantLatest(t, d2, map[TaskID]time.Duration{{"S0", 0}: 0, {"S0", 1}: time.Second})
	wantIDs(t, "M_1", d1.MustStart, []TaskID{{"S1", 0}})
	wantIDs(t, "M_2", d2.MustStart, []TaskID{{"S0", 0}})
	wantIDs(t, "J1 optional", d1.Optional, []TaskID{{"S0", 0}, {"S0", 1}, {"S1", 1}, {"S1", 2}})
	wantCPUs(t, "L_1", d1.Leftover, 290) // 0.08 from S0 plus 0.21 from one S1 task
	wantCPUs(t, "L_2", d2.Leftover, 210)
	if got := d1.Leftover.Scalar("cpus") + d2.Leftover.Scalar("cpus"); got != 500 {
		t.Errorf("L = %d, want 500", got)
	}
	// The deferred tasks' latest start is 1.0, so both jobs re-plan then.
	wantTime(t, "J1 next replan", d1.NextReplan, fig2Start.Add(time.Second))
	wantTime(t, "J2 next replan", d2.NextReplan, fig2Start.Add(time.Second))

	// Remaining work: task-seconds, and the SRTF key (0.71 + 0.1·d
	// for J1, 0.58 for J2) that puts J2 first.
	wantFloat(t, "J1 remaining work", d1.RemainingWork, 5.1)
	wantFloat(t, "J2 remaining work", d2.RemainingWork, 2.0)
	wantFloat(t, "J1 SRTF key", p.NormalizedWork(j1, fig2Start, cpus(fig2Capacity)), 0.73)
	wantFloat(t, "J2 SRTF key", p.NormalizedWork(j2, fig2Start, cpus(fig2Capacity)), 0.58)

	// Shapes for the demand report.
	wantShapes(t, "J1 must", d1.MustStartShapes(), map[int64]int64{210: 1})
	wantShapes(t, "J1 optional", d1.OptionalShapes(), map[int64]int64{210: 2, 40: 2})
	wantShapes(t, "J1 demand", d1.DemandShapes(), map[int64]int64{210: 3, 40: 2})
}

func TestFigure2_GreedyPlansAtZero(t *testing.T) {
	p := mustPlanner(t, Config{Altruism: 0, MinRemaining: DefaultMinRemaining})
	j1, j2 := fig2J1(t, 200), fig2J2(t)
	for _, j := range []*Job{j1, j2} {
		if err := j.ShareChanged(cpus(500)); err != nil {
			t.Fatal(err)
		}
	}
	d1 := mustPlan(t, p, j1, fig2Start, 0)
	d2 := mustPlan(t, p, j2, fig2Start, 0)
	if d1.Altruistic || d2.Altruistic {
		t.Fatalf("altruistic = %v, %v; want false, false", d1.Altruistic, d2.Altruistic)
	}
	// T_k does not depend on behaviour.
	wantDur(t, "T_1", d1.Completion, 2100*time.Millisecond)
	wantDur(t, "T_2", d2.Completion, 2*time.Second)
	// Greedy packing in 0.5: S1, S1 (best aligned), then S0, S0.
	wantIDs(t, "J1 must", d1.MustStart, []TaskID{{"S1", 0}, {"S0", 0}, {"S0", 1}, {"S1", 1}})
	wantIDs(t, "J2 must", d2.MustStart, []TaskID{{"S0", 0}})
	wantCPUs(t, "L_1", d1.Leftover, 0)
	wantCPUs(t, "L_2", d2.Leftover, 210)
	if !d1.NextReplan.IsZero() || !d2.NextReplan.IsZero() {
		t.Errorf("greedy plans set a plan timer: %v, %v", d1.NextReplan, d2.NextReplan)
	}
}

func TestFigure2_Schedules(t *testing.T) {
	// Average JCT 2.05 for strict partitioning, 1.55 for work-conserving DRF,
	// Carbyne and Tetris-style packing across jobs (footnote 2), for any S2
	// demand in (0, 0.5]. Makespan is 2.1 except where work-conserving DRF
	// lets J1 finish first (at 1.1), leaving J2's 2.0.
	tests := []struct {
		name       string
		mode       fig2Mode
		jct1, jct2 time.Duration
	}{
		{"strict", fig2Mode{altruism: 0}, 2100 * time.Millisecond, 2 * time.Second},
		{"wc-drf", fig2Mode{altruism: 0, leftover: true}, 1100 * time.Millisecond, 2 * time.Second},
		{"carbyne", fig2Mode{altruism: 1, leftover: true}, 2100 * time.Millisecond, time.Second},
		{"tetris", fig2Mode{altruism: 0, leftover: true, noShares: true}, 2100 * time.Millisecond, time.Second},
	}
	for _, d := range []int64{200, 500, 1} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/d=%d", tc.name, d), func(t *testing.T) {
				r := runFig2(t, tc.mode, d)
				wantDur(t, "J1 JCT", r.jct[0], tc.jct1)
				wantDur(t, "J2 JCT", r.jct[1], tc.jct2)
				avg := (r.jct[0] + r.jct[1]).Seconds() / 2
				want := map[string]float64{"strict": 2.05}[tc.name]
				if want == 0 {
					want = 1.55
				}
				wantFloat(t, "average JCT", avg, want)
				wantDur(t, "makespan", max(r.jct[0], r.jct[1]), max(tc.jct1, tc.jct2))
			})
		}
	}
}

func TestFigure2_CarbyneLeftoverAtZero(t *testing.T) {
	r := runFig2(t, fig2Mode{altruism: 1, leftover: true}, 200)
	first := r.rounds[0]
	// Pool L = L_DRF + L_1 + L_2 = 0 + 0.29 + 0.21; SRTF serves J2 first
	// (its second task) leaving 0.21, which J1's best-aligned task, an S1
	// (0.21·0.21 beats 0.04·0.21), uses up.
	if first.pool != 500 {
		t.Errorf("pool = %d, want 500", first.pool)
	}
	if !slices.Equal(first.srtfOrder, []int{1, 0}) {
		t.Errorf("SRTF order = %v, want J2 then J1", first.srtfOrder)
	}
	if first.poolAfterSRTFFirst != 210 {
		t.Errorf("pool after serving J2 = %d, want 210", first.poolAfterSRTFFirst)
	}
	if first.poolAfter != 0 {
		t.Errorf("pool after leftover = %d, want 0", first.poolAfter)
	}
	wantIDs(t, "J1 leftover", first.leftoverStarts[0], []TaskID{{"S1", 1}})
	wantIDs(t, "J2 leftover", first.leftoverStarts[1], []TaskID{{"S0", 1}})
	if first.used[0] != 420 || first.used[1] != 580 {
		t.Errorf("usage J1, J2 = %d, %d; want 420, 580", first.used[0], first.used[1])
	}
}

func TestFigure2_J1AloneAtOne(t *testing.T) {
	// At t=1 J2 is done and J1 re-plans alone. Whatever the share, 0.29 + d
	// (RemainingDAG cap), 0.29 (RunnableNow cap) or 1.0 (no cap), T_1 = 1.1
	// and the last S1 and both S0 tasks must start now.
	for _, share := range []int64{290 + 200, 290, 1000} {
		r := runFig2(t, fig2Mode{altruism: 1, leftover: true, aloneShare: share}, 200)
		var at1 *Decision
		for i := range r.rounds {
			if r.rounds[i].at.Equal(fig2Start.Add(time.Second)) {
				d := r.rounds[i].plans[0]
				at1 = &d
			}
		}
		if at1 == nil {
			t.Fatalf("share %d: J1 did not plan at t=1", share)
		}
		wantDur(t, "T_1 at t=1", at1.Completion, 1100*time.Millisecond)
		wantIDs(t, "M_1 at t=1", at1.MustStart, []TaskID{{"S0", 0}, {"S0", 1}, {"S1", 2}})
		wantDur(t, "J1 JCT", r.jct[0], 2100*time.Millisecond)
	}
}

func wantDur(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantFloat(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantCPUs(t *testing.T, what string, got protocol.Resources, want int64) {
	t.Helper()
	if !got.Equal(cpus(want)) {
		t.Errorf("%s = %v, want cpus:%d", what, got, want)
	}
}

func wantIDs(t *testing.T, what string, got, want []TaskID) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantLatest(t *testing.T, d Decision, want map[TaskID]time.Duration) {
	t.Helper()
	if len(d.Tasks) != len(want) {
		t.Errorf("planned %d tasks, want %d", len(d.Tasks), len(want))
	}
	for _, tp := range d.Tasks {
		if w, ok := want[tp.Task]; !ok || tp.LatestStart != w {
			t.Errorf("latest start of %v = %v, want %v", tp.Task, tp.LatestStart, w)
		}
	}
}

func wantShapes(t *testing.T, what string, got []protocol.TaskShape, want map[int64]int64) {
	t.Helper()
	counts := map[int64]int64{}
	for _, s := range got {
		counts[s.Resources.Scalar("cpus")] += s.Count
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d shapes, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s: %d tasks of cpus:%d, want %d", what, counts[k], k, v)
		}
	}
}
