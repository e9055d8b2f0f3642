package altruism

import (
	"testing"

	"github.com/allot-project/allot/protocol"
)

// A greedy plan reports every runnable task for the fair phase, so a job
// that is not altruistic is served like a plain framework; an altruistic
// plan of the same job splits must-start from optional work.
func TestAddTo_GreedyPlanReportsAllRunnableAsFair(t *testing.T) {
	t.Parallel()
	j := fig2J1(t, 200)
	if err := j.ShareChanged(cpus(500)); err != nil {
		t.Fatal(err)
	}
	p := mustPlanner(t, Config{Altruism: 0.5, MinRemaining: DefaultMinRemaining})
	for _, tc := range []struct {
		name       string
		draw       float64
		altruistic bool
	}{{"altruistic", 0.1, true}, {"greedy", 0.9, false}} {
		j.commit.clear()
		d := mustPlan(t, p, j, propStart, tc.draw)
		if d.Altruistic != tc.altruistic {
			t.Fatalf("%s: plan altruistic = %v", tc.name, d.Altruistic)
		}
		var req protocol.DemandRequest
		d.AddTo(&req)
		var runnable, fair int64
		for _, tp := range d.Tasks {
			if tp.Runnable {
				runnable++
				if d.FairNow(tp) {
					fair++
				}
			}
		}
		must, opt, demand := total(req.MustStart), total(req.Optional), total(req.Demand)
		if demand != runnable {
			t.Errorf("%s: demand %d tasks, want the %d runnable", tc.name, demand, runnable)
		}
		if tc.altruistic {
			if must != int64(len(d.MustStart)) || opt != int64(len(d.Optional)) || must+opt != runnable || opt == 0 {
				t.Errorf("%s: must %d optional %d of %d runnable, want the plan's %d and %d",
					tc.name, must, opt, runnable, len(d.MustStart), len(d.Optional))
			}
			if fair != int64(len(d.MustStart)) {
				t.Errorf("%s: %d tasks may start on fair offers, want the %d must-start", tc.name, fair, len(d.MustStart))
			}
		} else if must != runnable || opt != 0 || fair != runnable {
			t.Errorf("%s: must %d optional %d fair-now %d, want all %d runnable as must-start", tc.name, must, opt, fair, runnable)
		}
	}
}

func total(shapes []protocol.TaskShape) int64 {
	var n int64
	for _, s := range shapes {
		n += s.Count
	}
	return n
}
