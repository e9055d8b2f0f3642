package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/protocol"
)

// startGang runs an SDK framework whose scheduler runs one gang: it starts
// the gang once registered, hands it every offer and declines what the
// gang does not keep.
func startGang(t *testing.T, c *testcluster.Cluster, spec framework.GangSpec) (*sdkFramework, *framework.Gang) {
	t.Helper()
	rec := newRecorder()
	d := newDriver(t, c, rec, framework.WithName(spec.GroupID))
	g, err := framework.NewGang(d, spec)
	if err != nil {
		t.Fatal(err)
	}
	rec.OnRegistered = func(d *framework.Driver) {
		if err := g.Start(context.Background()); err != nil {
			rec.Error(d, err)
		}
	}
	rec.OnOffers = func(d *framework.Driver, offers []protocol.Offer) {
		ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
		defer cancel()
		rest, err := g.Offer(ctx, offers)
		if err != nil {
			rec.Error(d, err)
		}
		if len(rest) > 0 {
			if err := d.Decline(ctx, placement.OfferIDs(rest), framework.NoFilter); err != nil {
				rec.Error(d, err)
			}
		}
	}
	return runDriver(t, d, rec), g
}

// span is when a task's process ran, as it recorded itself.
type span struct {
	fw         protocol.FrameworkID
	start, end int64 // Unix nanoseconds
}

// TestAgent_CompetingGangs runs two frameworks, each with a gang of three
// tasks that needs every one of three real agents (one task per host, each
// a whole agent). Each gang lets go of what it holds at its deadline, so
// they do not deadlock: both launch, one after the other, and all six
// tasks finish; no agent ran the two gangs' tasks at once.
func TestAgent_CompetingGangs(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	whole := protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 256})
	spec := func(name string) framework.GangSpec {
		var tasks []protocol.TaskInfo
		for i := range 3 {
			tasks = append(tasks, framework.NewTask(protocol.TaskID(fmt.Sprint(name, "-", i)),
				"date +%s%N > start; sleep 0.5; date +%s%N > end").Shell().Resources(whole).Build())
		}
		return framework.GangSpec{
			GroupID:     name,
			Tasks:       tasks,
			Constraints: []protocol.Constraint{{Attribute: "hostname", Op: protocol.OpUnique}},
			Timeout:     time.Second,
			Refuse:      100 * time.Millisecond,
			Attempts:    -1,
		}
	}
	// The gangs start acquiring before the agents come, one by one: the
	// allocator spreads the agents between the two frameworks, so each
	// gang holds part of what it needs.
	f1, g1 := startGang(t, c, spec("g1"))
	f2, g2 := startGang(t, c, spec("g2"))
	var agents []*executors.Executor
	for range 3 {
		agents = append(agents, executors.New(t, c, executors.Options{Resources: whole}))
	}

	for _, x := range []struct {
		f *sdkFramework
		g *framework.Gang
	}{{f1, g1}, {f2, g2}} {
		if err := x.g.Wait(sdkCtx(t)); err != nil {
			t.Fatalf("gang: %v (attempt %d, holding %d offers)", err, x.g.Attempt(), x.g.Held())
		}
		for _, ti := range x.g.Tasks() {
			if st := x.f.rec.WaitState(t, ti.TaskID, protocol.TaskFinished); st.ExitCode == nil || *st.ExitCode != 0 {
				t.Errorf("%s: exit code %v", ti.TaskID, st.ExitCode)
			}
		}
		if errs := x.f.rec.Errors(); len(errs) > 0 {
			t.Errorf("scheduler errors: %v", errs)
		}
	}
	t.Logf("attempts: g1 %d, g2 %d", g1.Attempt(), g2.Attempt())

	// Each agent ran one task of each gang, one after the other.
	for _, e := range agents {
		var spans []span
		for _, ts := range e.Agent().State().Tasks {
			if ts.State != protocol.TaskFinished {
				t.Errorf("agent %s: task %s is %s", e.ID(), ts.TaskID, ts.State)
				continue
			}
			read := func(name string) int64 {
				v, err := strconv.ParseInt(strings.TrimSpace(readSandbox(t, e, ts.Sandbox, name)), 10, 64)
				if err != nil {
					t.Fatalf("task %s: %s: %v", ts.TaskID, name, err)
				}
				return v
			}
			spans = append(spans, span{fw: ts.FrameworkID, start: read("start"), end: read("end")})
		}
		if len(spans) != 2 || spans[0].fw == spans[1].fw {
			t.Errorf("agent %s ran %+v, want one task of each gang", e.ID(), spans)
			continue
		}
		if a, b := spans[0], spans[1]; a.start < b.end && b.start < a.end {
			t.Errorf("agent %s ran both gangs at once: %+v", e.ID(), spans)
		}
	}
}
