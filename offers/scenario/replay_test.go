package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/offers"
)

// prodArrives loads the shipped example: eng/batch runs 12 one-CPU tasks
// that never end on three 4-CPU agents; at 10 s eng/prod (weight 3,
// guarantee 2 CPUs, unbounded one-CPU demand) arrives. Interval 1 s, delay
// 5 s, deadline 30 s, at most 0.2 of the cluster newly taken per decision,
// until 60 s.
func prodArrives(t *testing.T) File {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "examples", "scenarios", "prod-arrives.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := ParseFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

func replayFile(t *testing.T, f File, pre offers.PreemptionPolicy) Report {
	t.Helper()
	rep, err := f.Replay(offers.PolicyDynamic, pre)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func sec(v float64) *float64 { return &v }

func fmtTime(p *float64) string {
	if p == nil {
		return "never"
	}
	return time.Duration(*p * float64(time.Second)).String()
}

// outcome is what the tests below check of a replay.
type outcome struct {
	prod, batch                int64    // tasks at the end
	guarantee, fairShare       *float64 // eng/prod first held 2 CPUs, 9 CPUs
	warned, killed, withdrawn  int      // of batch's tasks
	forGuarantee, forFairShare int      // warned for eng/prod's and prod-fw's needs
	prodSteps                  []int64  // prod-fw's tasks at each timeline point
	prodStepTimes              []float64
}

func checkOutcome(t *testing.T, rep Report, want outcome) {
	t.Helper()
	n := rep.Nodes
	if got := n["prod-fw"].Tasks; got != want.prod {
		t.Errorf("prod-fw tasks: got %d, want %d", got, want.prod)
	}
	if got := n["batch-fw"].Tasks; got != want.batch {
		t.Errorf("batch-fw tasks: got %d, want %d", got, want.batch)
	}
	if got := n["eng/prod"].ReachedGuarantee; fmtTime(got) != fmtTime(want.guarantee) {
		t.Errorf("eng/prod reached its guarantee: got %s, want %s", fmtTime(got), fmtTime(want.guarantee))
	}
	if got := n["eng/prod"].ReachedFairShare; fmtTime(got) != fmtTime(want.fairShare) {
		t.Errorf("eng/prod reached its fair share: got %s, want %s", fmtTime(got), fmtTime(want.fairShare))
	}
	b := n["eng/batch"]
	if b.Warned != want.warned || b.Killed != want.killed || b.Withdrawn != want.withdrawn {
		t.Errorf("eng/batch warned/killed/withdrawn: got %d/%d/%d, want %d/%d/%d",
			b.Warned, b.Killed, b.Withdrawn, want.warned, want.killed, want.withdrawn)
	}
	if got := n["eng/prod"].WarnedFor; got != want.forGuarantee {
		t.Errorf("warned for eng/prod's guarantee: got %d, want %d", got, want.forGuarantee)
	}
	if got := n["prod-fw"].WarnedFor; got != want.forFairShare {
		t.Errorf("warned for prod-fw's fair share: got %d, want %d", got, want.forFairShare)
	}
	var steps []int64
	var times []float64
	for _, p := range rep.Timeline {
		steps = append(steps, p.Tasks["prod-fw"])
		times = append(times, p.T)
	}
	if !slices.Equal(steps, want.prodSteps) || !slices.Equal(times, want.prodStepTimes) {
		t.Errorf("prod-fw over time: got %v at %v, want %v at %v", steps, times, want.prodSteps, want.prodStepTimes)
	}
}

// The scenario of docs/preemption.md under each cluster policy. The need is first seen by the
// decision at 10 s (prod's arrival) and is eligible at 15 s (delay 5 s).
func TestReplay_ProdArrives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pre  offers.PreemptionPolicy
		want outcome
	}{
		// Nothing is ever taken back and batch's tasks never end: prod
		// never runs.
		{"off", offers.PreemptOff, outcome{prod: 0, batch: 12, prodSteps: []int64{0}, prodStepTimes: []float64{0}}},
		// Two tasks (2 CPUs of one-CPU tasks) are warned at 15 s and killed
		// at their deadline, 15 + 30 = 45 s; the guarantee phase hands
		// prod the two CPUs at once. Beyond its guarantee prod may take
		// only revocable resources, and batch's are not.
		{"guarantees", offers.PreemptGuarantees, outcome{prod: 2, batch: 10, guarantee: sec(45),
			warned: 2, killed: 2, forGuarantee: 2, prodSteps: []int64{0, 2}, prodStepTimes: []float64{0, 45}}},
		// Fair share: weights 3 against 1 over 12 CPUs give prod 9, batch
		// 3. A decision newly takes at most 0.2 × 12 = 2.4 CPUs, two tasks:
		// 2 at 15 s (the guarantee's), 2 at 16, 17 and 18 s, the last 1 at
		// 19 s, each killed 30 s later: prod holds 2, 4, 6, 8, 9 at 45-49 s.
		{"fair", offers.PreemptFair, outcome{prod: 9, batch: 3, guarantee: sec(45), fairShare: sec(49),
			warned: 9, killed: 9, forGuarantee: 2, forFairShare: 7,
			prodSteps: []int64{0, 2, 4, 6, 8, 9}, prodStepTimes: []float64{0, 45, 46, 47, 48, 49}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := replayFile(t, prodArrives(t), tc.pre)
			if rep.Preemption.Policy != string(tc.pre) || rep.End != 60 {
				t.Errorf("ran %s until %v, want %s until 60", rep.Preemption.Policy, rep.End, tc.pre)
			}
			if fs := rep.Nodes["eng/prod"].FairShare["cpus"]; fs != 9 {
				t.Errorf("eng/prod fair share: got %v CPUs, want 9", fs)
			}
			checkOutcome(t, rep, tc.want)
		})
	}
}

// The timing knobs, on the same case: with no cap the whole fair share is
// warned at once; a zero deadline kills in the decision that warns; a zero
// delay acts on the arrival's own decision.
func TestReplay_ProdArrivesTiming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(p *FilePreemption)
		pre  offers.PreemptionPolicy
		want outcome
	}{
		// All 9 warned at 15 s, killed at 45 s.
		{"no cap", func(p *FilePreemption) { p.MaxFraction = sec(1) }, offers.PreemptFair,
			outcome{prod: 9, batch: 3, guarantee: sec(45), fairShare: sec(45), warned: 9, killed: 9,
				forGuarantee: 2, forFairShare: 7, prodSteps: []int64{0, 9}, prodStepTimes: []float64{0, 45}}},
		// Warned and killed at 15 s.
		{"zero deadline", func(p *FilePreemption) { p.Deadline = sec(0) }, offers.PreemptGuarantees,
			outcome{prod: 2, batch: 10, guarantee: sec(15), warned: 2, killed: 2, forGuarantee: 2,
				prodSteps: []int64{0, 2}, prodStepTimes: []float64{0, 15}}},
		// Warned at 10 s, killed at 40 s.
		{"zero delay", func(p *FilePreemption) { p.Delay = sec(0) }, offers.PreemptGuarantees,
			outcome{prod: 2, batch: 10, guarantee: sec(40), warned: 2, killed: 2, forGuarantee: 2,
				prodSteps: []int64{0, 2}, prodStepTimes: []float64{0, 40}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := prodArrives(t)
			tc.edit(f.Preemption)
			checkOutcome(t, replayFile(t, f, tc.pre), tc.want)
		})
	}
}

// A role's own policy overrides the cluster's: with the cluster off and
// eng/prod fair, prod reaches its fair share as under a fair cluster.
func TestReplay_RolePolicy(t *testing.T) {
	t.Parallel()
	f := prodArrives(t)
	f.Root.Children[0].Children[1].Preemption = "fair"
	checkOutcome(t, replayFile(t, f, offers.PreemptOff), outcome{prod: 9, batch: 3, guarantee: sec(45),
		fairShare: sec(49), warned: 9, killed: 9, forGuarantee: 2, forFairShare: 7,
		prodSteps: []int64{0, 2, 4, 6, 8, 9}, prodStepTimes: []float64{0, 45, 46, 47, 48, 49}})
}

// Warnings are withdrawn when the need goes away: two tasks of a role
// outside eng end at 20 s, before the deadline of the two batch tasks
// warned at 15 s; prod gets the freed CPUs and the warnings are withdrawn.
func TestReplay_WarningWithdrawn(t *testing.T) {
	t.Parallel()
	f := prodArrives(t)
	f.Root.Children[0].Children[0].Children[0].Tasks = ptr(int64(10))
	f.Root.Children = append(f.Root.Children, FileNode{Name: "other", Children: []FileNode{
		{Name: "other-fw", Demand: map[string]float64{"cpus": 1}, Tasks: ptr(int64(2)), Duration: sec(20)}}})
	rep := replayFile(t, f, offers.PreemptGuarantees)
	checkOutcome(t, rep, outcome{prod: 2, batch: 10, guarantee: sec(20), warned: 2, withdrawn: 2,
		forGuarantee: 2, prodSteps: []int64{0, 2}, prodStepTimes: []float64{0, 20}})
	if o := rep.Nodes["other"]; o.Finished != 2 || o.Tasks != 0 {
		t.Errorf("other: %d finished, %d running; want 2 and 0", o.Finished, o.Tasks)
	}
}

func ptr[T any](v T) *T { return &v }

// Tasks with a duration end and are replaced; without until the replay
// stops once nothing is left to happen. Leaf a has 5 ten-second tasks on
// 2 CPUs; leaf b arrives at 5 s with one task that never ends and finds no
// free CPU.
//
//   - 0 s: a runs 2.
//   - 10 s: a's two end; both leaves hold nothing and the walk serves the
//     one created first, a, then b (a at 1 of 2 CPUs): a 1, b 1.
//   - 20 s and 30 s: a's task ends and a, now below b, takes the CPU for
//     its next one: no change.
//   - 40 s: a's fifth task ends: a 0, b 1, and nothing is left to happen.
func TestReplay_DurationsAndArrivals(t *testing.T) {
	t.Parallel()
	spec := tree(res{"cpus": 2},
		Node{Name: "a", Demand: res{"cpus": 1}, Tasks: 5, Duration: 10 * time.Second},
		Node{Name: "b", Demand: res{"cpus": 1}, Tasks: 1, Arrival: 5 * time.Second})
	rep, err := Replay(spec, offers.PolicyDynamic)
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]float64
	for _, p := range rep.Timeline {
		got = append(got, [3]float64{p.T, float64(p.Tasks["a"]), float64(p.Tasks["b"])})
	}
	want := [][3]float64{{0, 2, 0}, {10, 1, 1}, {40, 0, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("timeline (t, a, b): got %v, want %v", got, want)
	}
	if a := rep.Nodes["a"]; a.Finished != 5 {
		t.Errorf("a finished %d tasks, want 5", a.Finished)
	}
	if rep.End != 40 {
		t.Errorf("ended at %v, want 40 (a's last task)", rep.End)
	}
}

// A spec without a timeline replays to the allocation Fill reaches.
func TestReplay_UntimedSpecMatchesFill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec Spec
	}{{"figure4", fig4R(10)}, {"t-dove", tDove()}, {"figure8", fig8R(800, 200, 200)}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.spec.Timed() {
				t.Fatal("spec reports a timeline")
			}
			r := mustRun(t, tc.spec, offers.PolicyDynamic)
			rep, err := Replay(tc.spec, offers.PolicyDynamic)
			if err != nil {
				t.Fatal(err)
			}
			for _, leaf := range r.Leaves() {
				if got, want := rep.Nodes[leaf].Tasks, r.Tasks(leaf); got != want {
					t.Errorf("%s: replay %d tasks, fill %d", leaf, got, want)
				}
			}
		})
	}
}

// The decision is pure and replayable: the same file twice gives the same
// report, timeline included.
func TestReplay_Deterministic(t *testing.T) {
	t.Parallel()
	a := replayFile(t, prodArrives(t), offers.PreemptFair)
	b := replayFile(t, prodArrives(t), offers.PreemptFair)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two replays differ:\n%+v\n%+v", a, b)
	}
	if len(a.Timeline) != 6 {
		t.Fatalf("timeline has %d points, want 6 (start, then 45-49 s)", len(a.Timeline))
	}
}
