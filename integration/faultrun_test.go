package integration

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// TestFaultRun is the long fault run (make faults; skipped otherwise):
// three `allot master` processes and three `allot agent` processes with
// the shipped defaults, the leader killed with SIGKILL (and started again)
// every ten seconds while a framework runs 1,000 tasks of two to five
// seconds, launching again only what ends LOST, DROPPED or ERROR. Every
// task must finish exactly once, none may run twice (each run appends its
// name to a file), and every launch the leader took must end with a status
// the framework received. It reports how long each kill left the
// framework without a leader: to the first answered call, and to the first
// offer.
func TestFaultRun(t *testing.T) {
	if os.Getenv("ALLOT_FAULT_RUN") == "" {
		t.Skip("a five-minute fault run: make faults")
	}
	tasks, period := envInt("ALLOT_FAULT_RUN_TASKS", 1000), 10*time.Second
	procs := testcluster.StartProcs(t, allotBinary(t), testcluster.ProcOptions{Masters: 3, Agents: 3})
	runs := filepath.Join(t.TempDir(), "runs.log")
	shape := protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 32})
	ff := newFaultFramework(tasks, shape, func(logical string) string {
		n, _ := strconv.Atoi(logical[1:])
		return fmt.Sprintf("echo %s >> %s; sleep %d", logical, runs, 2+n%4)
	})
	d, err := framework.NewDriver(ff, framework.WithNATSURLs(procs.NATSURLs()...), framework.WithName("faults"),
		framework.WithLogger(hclog.NewNullLogger()), framework.WithRequestTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Run(ctx) }()
	select {
	case <-d.Ready():
	case <-time.After(time.Minute):
		t.Fatal("framework not subscribed")
	}
	start := time.Now()
	var toCall, toOffer []time.Duration
	tick := time.NewTicker(period)
	defer tick.Stop()
	deadline := time.After(20 * time.Minute)
loop:
	for {
		select {
		case <-ff.done:
			break loop
		case <-deadline:
			t.Fatalf("%d tasks left after 20 minutes", ff.remaining())
		case <-tick.C:
		}
		i := procs.LeaderIndex()
		if i < 0 {
			continue
		}
		procs.Masters[i].Kill()
		killed := time.Now()
		procs.Masters[i].Start()
		// The first call a new leader answers, and the first offer.
		for time.Since(killed) < period {
			cctx, ccancel := context.WithTimeout(ctx, time.Second)
			err := d.Demand(cctx, protocol.TaskShape{Resources: shape, Count: int64(max(ff.remaining(), 1))})
			ccancel()
			if err == nil {
				toCall = append(toCall, time.Since(killed))
				break
			}
		}
		if o, ok := ff.firstOfferAfter(killed, time.Now().Add(period/2)); ok {
			toOffer = append(toOffer, o.Sub(killed))
		}
	}
	took := time.Since(start)
	ff.check(t, tasks, runs)
	t.Logf("%d tasks in %v through %d leader kills; relaunched after %v", tasks, took.Round(time.Second), len(toCall), ff.relaunchCounts())
	t.Logf("kill to first answered call: %s", summarize(toCall))
	t.Logf("kill to first offer: %s", summarize(toOffer))
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// summarize gives the median, the range and the count of ds.
func summarize(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	return fmt.Sprintf("median %v, %v to %v, over %d kills", r(s[len(s)/2]), r(s[0]), r(s[len(s)-1]), len(s))
}

func (f *faultFramework) remaining() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.left
}

func (f *faultFramework) relaunchCounts() map[protocol.TaskState]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.relaunch)
}

// firstOfferAfter waits until an offer came after t, or until.
func (f *faultFramework) firstOfferAfter(t, until time.Time) (time.Time, bool) {
	for time.Now().Before(until) {
		f.mu.Lock()
		for _, o := range f.offers {
			if o.After(t) {
				f.mu.Unlock()
				return o, true
			}
		}
		f.mu.Unlock()
		select {
		case <-time.After(10 * time.Millisecond):
		case <-f.done:
		}
	}
	return time.Time{}, false
}

// check asserts the run's invariants.
func (f *faultFramework) check(t *testing.T, tasks int, runs string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range tasks {
		logical := fmt.Sprintf("t%04d", i)
		if n := f.finished[logical]; n != 1 {
			t.Errorf("task %s finished %d times, want once", logical, n)
		}
	}
	for _, st := range f.bad {
		t.Errorf("task %s ended %s (%s): %s", st.TaskID, st.State, st.Reason, st.Message)
	}
	for id := range f.accepted {
		if _, ok := f.ended[id]; !ok {
			t.Errorf("launch %s was taken but no terminal status reached the framework", id)
		}
	}
	file, err := os.Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	ran := map[string]int{}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		ran[sc.Text()]++
	}
	for logical, n := range ran {
		if n != 1 {
			t.Errorf("task %s ran %d times", logical, n)
		}
	}
	if len(ran) != tasks {
		t.Errorf("%d tasks ran, want %d", len(ran), tasks)
	}
}
