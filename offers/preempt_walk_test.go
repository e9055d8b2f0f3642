package offers

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestPlanPreemption_walkMatchesFullRead plans on clusters of the
// benchmark's shape (2,000 agents, 20,000 tasks, 1,000 roles) twice, once
// reading every agent of the shared lists for each need and once walking
// their heaps (from lists of 64 agents up), over several plans with tasks
// ending, starting and warned between them: the plans must be the same.
func TestPlanPreemption_walkMatchesFullRead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large clusters")
	}
	t.Parallel()
	now := time.Unix(2_000_000, 0)
	for _, seed := range []uint64{3, 5} {
		full := newPreemptCluster(t, 2000, 10, seed)
		walk := newPreemptCluster(t, 2000, 10, seed)
		full.a.preempt.walkMin = math.MaxInt
		walk.a.preempt.walkMin = 64
		cf, cw := newChurn(full), newChurn(walk)
		walked := 0
		for step := range 4 {
			pf := full.a.PlanPreemption(cf.next(), now)
			pw := walk.a.PlanPreemption(cw.next(), now)
			if !reflect.DeepEqual(pf, pw) {
				t.Fatalf("seed %d plan %d: walking the shared lists planned otherwise than reading them whole:\n%s", seed, step, planDiff(pf, pw))
			}
			if len(pf.Preempt) == 0 {
				t.Fatalf("seed %d plan %d: nothing preempted; the comparison shows nothing", seed, step)
			}
			walked += walk.a.preempt.walks
			// The victims are warned in the next plan's list.
			for _, c := range []*churn{cf, cw} {
				c.warned = map[protocol.TaskID]bool{}
				for _, v := range pf.Preempt {
					c.warned[v.TaskID] = true
				}
			}
			now = now.Add(time.Second)
		}
		if walked == 0 {
			t.Fatalf("seed %d: no search walked a heap", seed)
		}
	}
}

// planDiff names the first difference between two plans.
func planDiff(x, y PreemptionPlan) string {
	for _, l := range []struct {
		name string
		x, y []Victim
	}{{"preempt", x.Preempt, y.Preempt}, {"keep", x.Keep, y.Keep}, {"release", x.Release, y.Release}} {
		for i := range max(len(l.x), len(l.y)) {
			if i >= len(l.x) || i >= len(l.y) || l.x[i] != l.y[i] {
				return fmt.Sprintf("%s[%d] of %d/%d: %v / %v", l.name, i, len(l.x), len(l.y), l.x[i:min(i+3, len(l.x))], l.y[i:min(i+3, len(l.y))])
			}
		}
	}
	for i := range max(len(x.Needs), len(y.Needs)) {
		if i >= len(x.Needs) || i >= len(y.Needs) || !reflect.DeepEqual(x.Needs[i], y.Needs[i]) {
			return fmt.Sprintf("need %d of %d/%d: %+v / %+v", i, len(x.Needs), len(y.Needs), x.Needs[i:min(i+1, len(x.Needs))], y.Needs[i:min(i+1, len(y.Needs))])
		}
	}
	return "no difference found"
}
