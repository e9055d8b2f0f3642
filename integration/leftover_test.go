package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestLeftover_Figure2 runs the leftover step of the Carbyne paper's
// Figure 2 (docs/carbyne.md) end to end: two SDK frameworks plan
// their jobs with framework/altruism in a share of 0.5 and declare the
// plans (must-start set, optional work, remaining work); the one agent,
// of capacity 1.0, joins only then, so one round serves both. The fair
// phase starts the must-start tasks (0.21 for J1, 0.29 for J2); SRTF
// serves J2's optional task first (2.0 task-seconds left against J1's
// 5.1), leaving 0.21 of the pool of 0.5, which J1's best-aligned optional
// task, an S1, uses up. Every task carries the kind of its offer, and J1
// runs 0.42, J2 0.58.
func TestLeftover_Figure2(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	leader := c.WaitForLeader()
	cpus := func(n int64) protocol.Resources { return protocol.Scalars(map[string]int64{protocol.ResCPUs: n}) }
	jobs := []altruism.JobSpec{
		{Stages: []altruism.StageSpec{
			{Name: "S0", Tasks: 2, Demand: cpus(40), Duration: time.Second},
			{Name: "S1", Tasks: 3, Demand: cpus(210), Duration: time.Second},
			{Name: "S2", Tasks: 1, Demand: cpus(200), Duration: 100 * time.Millisecond, Parents: []string{"S0", "S1"}},
		}},
		{Stages: []altruism.StageSpec{{Name: "S0", Tasks: 2, Demand: cpus(290), Duration: time.Second}}},
	}
	planner, err := altruism.NewPlanner(altruism.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fws := make([]*sdkFramework, len(jobs))
	for i, spec := range jobs {
		job, err := altruism.NewJob(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := job.ShareChanged(cpus(500)); err != nil {
			t.Fatal(err)
		}
		plan, err := planner.Plan(job, time.Unix(0, 0), 0)
		if err != nil {
			t.Fatal(err)
		}
		var req protocol.DemandRequest
		plan.AddTo(&req)
		rec := newRecorder()
		d := newDriver(t, c, rec, framework.WithName(fmt.Sprintf("J%d", i+1)))
		if err := d.DeclareDemand(ctx, req); err != nil {
			t.Fatal(err)
		}
		fws[i] = runDriver(t, d, rec)
		// Offers open (the framework is revived) once its demand is declared.
		testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
			if f, ok := leader.View().Framework(d.ID()); !ok || f.Suppressed {
				return errors.New("demand not declared yet")
			}
			return nil
		})
	}
	agent := c.NewAgent(testcluster.AgentOptions{Resources: cpus(1000), Held: true})

	want := []map[protocol.OfferKind]int64{
		{protocol.OfferFair: 210, protocol.OfferLeftover: 210},
		{protocol.OfferFair: 290, protocol.OfferLeftover: 290},
	}
	for i, f := range fws {
		var got map[protocol.OfferKind]protocol.Offer
		testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
			offers := f.rec.OffersSince(0)
			got = map[protocol.OfferKind]protocol.Offer{}
			for _, o := range offers {
				if _, dup := got[o.Kind]; dup {
					return fmt.Errorf("J%d: two %s offers: %v", i+1, o.Kind, offers)
				}
				got[o.Kind] = o
			}
			if len(got) != 2 {
				return fmt.Errorf("J%d: offers %v, want a fair and a leftover one", i+1, offers)
			}
			return nil
		})
		for kind, o := range got {
			if c := o.Resources.Scalar(protocol.ResCPUs); c != want[i][kind] || o.AgentID != agent.ID() {
				t.Errorf("J%d %s offer: %s on %s, want cpus:%d on %s", i+1, kind, o.Resources, o.AgentID, want[i][kind], agent.ID())
			}
			task := framework.NewTask(protocol.TaskID("t-"+string(kind)), "true").Shell().CPUs(o.Resources.Scalar(protocol.ResCPUs)).Build()
			if err := f.d.Launch(ctx, []protocol.OfferID{o.ID}, task); err != nil {
				t.Fatalf("J%d: launch on the %s offer: %v", i+1, kind, err)
			}
		}
	}
	for i, want := range []int64{420, 580} {
		var used int64
		for _, tk := range leader.View().TasksByFramework(fws[i].d.ID()) {
			used += tk.Info.Resources.Scalar(protocol.ResCPUs)
			if string(tk.ID) != "t-"+string(tk.Kind) {
				t.Errorf("J%d: task %s has kind %s", i+1, tk.ID, tk.Kind)
			}
		}
		if used != want {
			t.Errorf("J%d runs cpus:%d, want %d", i+1, used, want)
		}
	}
}
