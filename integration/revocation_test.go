package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
)

// launcher is an SDK framework that launches as many 1-CPU tasks as each
// offer holds, up to max, and records its offers and warnings.
type launcher struct {
	*sdktest.Recorder
	name string
	max  int

	mu       sync.Mutex
	launched int
	warnings []protocol.PreemptionEvent
}

func (l *launcher) Preempting(_ *framework.Driver, ev protocol.PreemptionEvent) {
	l.mu.Lock()
	l.warnings = append(l.warnings, ev)
	l.mu.Unlock()
}

func (l *launcher) onOffers(d *framework.Driver, offers []protocol.Offer) {
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	for _, o := range offers {
		l.mu.Lock()
		n := min(o.Resources.Scalar(protocol.ResCPUs)/1000, int64(l.max-l.launched))
		first := l.launched
		l.launched += int(max(n, 0))
		l.mu.Unlock()
		var tasks []protocol.TaskInfo
		for i := range max(n, 0) {
			id := protocol.TaskID(fmt.Sprintf("%s-%d", l.name, first+int(i)))
			tasks = append(tasks, framework.NewTask(id, "sleep 600").Shell().CPUs(1000).Build())
		}
		var err error
		if len(tasks) == 0 {
			err = d.Decline(ctx, []protocol.OfferID{o.ID}, framework.NoFilter)
		} else {
			err = d.Launch(ctx, []protocol.OfferID{o.ID}, tasks...)
		}
		if err != nil {
			l.Error(d, err)
		}
	}
}

func newLauncher(t *testing.T, c *testcluster.Cluster, name, role string, max int, opts ...framework.Option) (*launcher, *sdkFramework) {
	t.Helper()
	l := &launcher{Recorder: newRecorder(), name: name, max: max}
	l.Recorder.OnOffers = l.onOffers
	opts = append([]framework.Option{framework.WithName(name), framework.WithRole(role)}, opts...)
	d, err := framework.NewDriver(l, append(driverOptions(t, c), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l, runDriver(t, d, l.Recorder)
}

// TestRevocation_lenderGetsItsShareBack: a borrower runs long tasks on
// resources lent to it (revocable, leftover offers); when the lender's
// demand returns, it gets its share back within the warning deadline,
// the borrower's revoked tasks end KILLED with reason revoked after a
// warning, and a framework that takes no revocable resources is never
// offered any.
func TestRevocation_lenderGetsItsShareBack(t *testing.T) {
	t.Parallel()
	pc := master.DefaultPreemptionConfig()
	// A short delay and deadline keep the test short; a cap of half the
	// cluster per decision lets both lent CPUs be warned at once (the
	// shipped 0.2 of this 4-CPU cluster takes one a second).
	pc.Delay, pc.Deadline, pc.MaxFraction = 300*time.Millisecond, 2*time.Second, 0.5
	alloc := master.DefaultConfig().AllocationInterval
	// The lender's role weighs 2 against the other two's 1: of the 4 CPUs
	// all three ask for, its fair share is 2.
	c := testcluster.New(t, testcluster.Options{Masters: 1, AllocationInterval: alloc, Roles: map[string]float64{"a": 2},
		Configure: func(_ int, cfg *master.Config) { cfg.Preemption = pc }})
	ctx := sdkCtx(t)
	unit := []protocol.TaskShape{{Resources: unitTask(), Count: 4}}

	// Both ask for optional work only: it runs on leftover.
	refuser, refuserFw := newLauncher(t, c, "refuser", "c", 4, framework.WithCapabilities(protocol.CapNoRevocable))
	if err := refuserFw.d.DeclareDemand(ctx, protocol.DemandRequest{Demand: unit, Optional: unit}); err != nil {
		t.Fatal(err)
	}
	borrower, borrowerFw := newLauncher(t, c, "borrower", "b", 4)
	if err := borrowerFw.d.DeclareDemand(ctx, protocol.DemandRequest{Demand: unit, Optional: unit}); err != nil {
		t.Fatal(err)
	}
	lender, lenderFw := newLauncher(t, c, "lender", "a", 2, framework.WithSuppressed())
	c.NewAgent(testcluster.AgentOptions{Resources: agentResources(4), Held: true})

	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		if got := runningCPUs(c.Agents())[borrowerFw.d.ID()]; got != 4000 {
			return fmt.Errorf("borrower runs %d milli-CPUs, want all 4000 on loan", got)
		}
		return nil
	})
	for _, o := range borrower.OffersSince(0) {
		if !o.Revocable || o.Kind != protocol.OfferLeftover {
			t.Errorf("borrower's offer %s is %s, revocable %v; want leftover and revocable", o.ID, o.Kind, o.Revocable)
		}
	}

	// The lender's demand returns.
	stalls := testutil.MeterStalls(t)
	returned := time.Now()
	if err := lenderFw.d.DeclareDemand(ctx, protocol.DemandRequest{Demand: []protocol.TaskShape{{Resources: unitTask(), Count: 2}}}); err != nil {
		t.Fatal(err)
	}
	if err := lenderFw.d.Revive(ctx); err != nil {
		t.Fatal(err)
	}
	var reached time.Time
	testutil.WaitFor(t, 20*time.Second, 2*time.Millisecond, func() error {
		if got := runningCPUs(c.Agents())[lenderFw.d.ID()]; got < 2000 {
			return fmt.Errorf("lender runs %d milli-CPUs, want its 2000 back", got)
		}
		reached = time.Now()
		return nil
	})
	borrower.mu.Lock()
	warnings := append([]protocol.PreemptionEvent(nil), borrower.warnings...)
	borrower.mu.Unlock()
	if len(warnings) == 0 || warnings[0].Withdrawn {
		t.Fatalf("the borrower got no warning before its tasks were revoked: %+v", warnings)
	}
	deadline := time.Unix(0, warnings[len(warnings)-1].Deadline)
	// Both bounds allow the time the process (the cluster's too) was kept
	// from running.
	stalled := stalls.Since(returned)
	if reached.After(deadline.Add(alloc + stalled)) {
		t.Errorf("the lender got its share %v after the last warning's deadline, want within one allocation interval (%v) and the %v the process was stalled", reached.Sub(deadline), alloc, stalled)
	}
	// The need is seen at the first decision after the demand returns
	// (within an interval, give or take a tick's lateness: another
	// interval), acted on after the delay, and the kill comes at the
	// deadline.
	if limit := 2*pc.Interval + pc.Delay + pc.Deadline + alloc + stalled; reached.Sub(returned) > limit {
		t.Errorf("the lender got its share %v after its demand returned, want within %v", reached.Sub(returned), limit)
	}
	t.Logf("the lender got its share %v after its demand returned, %v after the last warning's deadline", reached.Sub(returned), reached.Sub(deadline))
	checkRevoked(t, borrower, warnings)

	for _, o := range refuser.OffersSince(0) {
		if o.Revocable || o.Kind == protocol.OfferLeftover {
			t.Errorf("the framework that takes no revocable resources was offered %s (%s)", o.ID, o.Kind)
		}
	}
	lender.mu.Lock()
	defer lender.mu.Unlock()
	if len(lender.warnings) != 0 {
		t.Errorf("the lender was warned: %+v", lender.warnings)
	}
}

// checkRevoked checks that each preemption warning named its tasks as
// revoked, and that exactly the 2 the lender needed ended KILLED, revoked,
// after a warning that was not withdrawn.
func checkRevoked(t *testing.T, borrower *launcher, warnings []protocol.PreemptionEvent) {
	t.Helper()
	warned := map[protocol.TaskID]bool{}
	for _, ev := range warnings {
		for _, pt := range ev.Tasks {
			warned[pt.TaskID] = !ev.Withdrawn
			if pt.Reason != protocol.ReasonRevoked {
				t.Errorf("warned task %s for %s, want revoked", pt.TaskID, pt.Reason)
			}
		}
	}
	// The borrower hears of its KILLED tasks on its own stream, which may
	// come after the lender's launch.
	var killed []sdktest.Arrival
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		killed = killed[:0]
		for _, a := range firstOfEachState(borrower.AllStatuses()) {
			if a.State == protocol.TaskKilled {
				killed = append(killed, a)
			}
		}
		if len(killed) < 2 {
			return fmt.Errorf("the borrower saw %d of its tasks killed, want the 2 the lender needed", len(killed))
		}
		return nil
	})
	for _, a := range killed {
		if a.Reason != protocol.ReasonRevoked || !warned[a.TaskID] {
			t.Errorf("borrower task %s killed with %q (warned %v), want revoked after a warning", a.TaskID, a.Reason, warned[a.TaskID])
		}
	}
	if len(killed) != 2 {
		t.Errorf("%d borrower tasks revoked, want the 2 the lender needed", len(killed))
	}
}

// firstOfEachState keeps the first of each task's statuses in each state:
// reconciliation and redelivery repeat a state the task reached once.
func firstOfEachState(sts []sdktest.Arrival) []sdktest.Arrival {
	seen := map[string]bool{}
	var out []sdktest.Arrival
	for _, a := range sts {
		k := string(a.TaskID) + "/" + string(a.State)
		if !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}
