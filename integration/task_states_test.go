package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// heldServer serves a small file, holding every request while held is
// set; held counts the requests it holds.
type heldServer struct {
	*httptest.Server
	hold    atomic.Bool
	waiting atomic.Int32
	release chan struct{}
	once    sync.Once
}

func newHeldServer(t *testing.T) *heldServer {
	s := &heldServer{release: make(chan struct{})}
	s.hold.Store(true)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hold.Load() {
			s.waiting.Add(1)
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintln(w, "payload")
	}))
	t.Cleanup(func() {
		s.serve()
		s.Close()
	})
	return s
}

// serve lets every request through from now on.
func (s *heldServer) serve() {
	s.once.Do(func() {
		s.hold.Store(false)
		close(s.release)
	})
}

// recordingDAG is a DAG scheduler that keeps every status it is given.
type recordingDAG struct {
	*dag.Scheduler
	mu  sync.Mutex
	sts []protocol.TaskStatus
}

func (r *recordingDAG) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	r.mu.Lock()
	r.sts = append(r.sts, st)
	r.mu.Unlock()
	r.Scheduler.StatusUpdate(d, st)
}

func (r *recordingDAG) statuses() []protocol.TaskStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.TaskStatus(nil), r.sts...)
}

// TestTaskStates_AgentKilledDuringLaunch kills an agent process (SIGKILL)
// while four launches that reached it are still fetching their files, and
// starts it again. The tasks never started, so none is FAILED: the
// partition-aware framework hears DROPPED, the DAG scheduler (not
// partition aware) LOST, both with reason agent_restarted, and the DAG
// scheduler runs its three again, without counting a failure, to the
// job's end.
func TestTaskStates_AgentKilledDuringLaunch(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1, AgentTimeout: 30 * time.Second})
	files := newHeldServer(t)
	uri := protocol.URI{Value: files.URL + "/payload"}
	p := startAgentProcess(t, c, "drop-agent")
	id := p.waitRegistered()

	sched, err := dag.New(dag.WithLogger(testlog.New(t).Named("dag")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sched.Close)
	rec := &recordingDAG{Scheduler: sched}
	runScheduler(t, c, rec, "dag")
	ctx, cancel := context.WithTimeout(context.Background(), 2*sdkWait)
	defer cancel()
	job := dag.Job{ID: "fetchers",
		Spec: altruism.JobSpec{Stages: []altruism.StageSpec{{Name: "fetch", Tasks: 3,
			Demand: protocol.Scalars(map[string]int64{protocol.ResCPUs: 100, protocol.ResMem: 32}), Duration: 100 * time.Millisecond}}},
		Task: func(dag.TaskRef) protocol.TaskInfo {
			return framework.NewTask("", "cat payload").Shell().URI(uri).Build()
		},
	}
	if err := sched.Submit(ctx, job); err != nil {
		t.Fatal(err)
	}
	fetching := func(want int32) {
		testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
			if n := files.waiting.Load(); n < want {
				return fmt.Errorf("%d fetches reached the file server, want %d", n, want)
			}
			return nil
		})
	}
	fetching(3)
	aware := startSDK(t, c, framework.WithName("aware"), framework.WithCapabilities(protocol.CapPartitionAware))
	aware.launch(t, id, framework.NewTask("fetching", "cat payload").Shell().CPUs(100).Mem(32).URI(uri).Build())

	fetching(4)
	p.kill()
	files.serve()
	p.start()

	st := aware.rec.WaitStatus(t, "fetching", "terminal", func(st sdktest.Arrival) bool { return st.State.Terminal() })
	if st.State != protocol.TaskDropped || st.Reason != protocol.ReasonAgentRestarted {
		t.Errorf("partition-aware framework: task ended %s (%s), want DROPPED (agent_restarted)", st.State, st.Reason)
	}
	// Done with it: the offers it holds go back to the cluster.
	_ = aware.stop(t)
	res, err := sched.Wait(ctx, "fetchers")
	if err != nil || res.Err != nil {
		t.Fatalf("job: %v, %v", err, res.Err)
	}
	if res.Failures != 0 {
		t.Errorf("job counted %d failed attempts, want none: the dropped launches were no failures", res.Failures)
	}
	ended := map[protocol.TaskID]protocol.TaskStatus{}
	finished := 0
	for _, st := range rec.statuses() {
		switch {
		case st.State == protocol.TaskFinished:
			finished++
		case st.State.Terminal():
			ended[st.TaskID] = st
		}
	}
	if len(ended) != 3 || finished < 3 {
		t.Fatalf("DAG statuses: %d attempts ended without finishing, %d finished; want 3 and 3 (%v)", len(ended), finished, rec.statuses())
	}
	for id, st := range ended {
		if st.State != protocol.TaskLost || st.Reason != protocol.ReasonAgentRestarted {
			t.Errorf("DAG task %s ended %s (%s), want LOST (agent_restarted)", id, st.State, st.Reason)
		}
	}
}

// TestTaskStates_StaleOfferDropped accepts an offer the master rescinded
// (its offer timeout passed): the accept is refused, and the task ends
// DROPPED with reason invalid_offers for a partition-aware framework and
// LOST for another, never ERROR, which would tell the framework that the
// same task would fail again.
func TestTaskStates_StaleOfferDropped(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1, OfferTimeout: 300 * time.Millisecond})
	e := executors.New(t, c, executors.Options{})
	for _, tc := range []struct {
		name string
		opts []framework.Option
		want protocol.TaskState
	}{
		{"aware", []framework.Option{framework.WithCapabilities(protocol.CapPartitionAware)}, protocol.TaskDropped},
		{"plain", nil, protocol.TaskLost},
	} {
		f := startSDK(t, c, append(tc.opts, framework.WithName(tc.name))...)
		task := shTask("late", "true")
		o := f.offerOn(t, e.ID(), task.Resources)
		testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
			if !slices.Contains(f.rec.Rescinds(), o.ID) {
				return fmt.Errorf("%s: offer %s not rescinded yet", tc.name, o.ID)
			}
			return nil
		})
		task.AgentID = e.ID() // past the driver's own check, to the master
		err := f.d.Launch(sdkCtx(t), []protocol.OfferID{o.ID}, task)
		if !errors.Is(err, protocol.ErrOfferRescinded) && !errors.Is(err, protocol.ErrUnknownOffer) {
			t.Fatalf("%s: accept of a rescinded offer: %v, want rescinded or unknown", tc.name, err)
		}
		st := f.rec.WaitStatus(t, "late", "terminal", func(st sdktest.Arrival) bool { return st.State.Terminal() })
		if st.State != tc.want || st.Reason != protocol.ReasonInvalidOffers || st.UUID != "" {
			t.Errorf("%s: task ended %s (%s, uuid %q), want %s (invalid_offers) with no update UUID", tc.name, st.State, st.Reason, st.UUID, tc.want)
		}
		if err := f.stop(t); err != nil {
			t.Fatal(err)
		}
	}
}
