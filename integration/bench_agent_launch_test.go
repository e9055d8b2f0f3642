package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// latencyScheduler launches its tasks on the first offers that hold them
// and records, per task, when the launch was sent and when RUNNING
// arrived.
type latencyScheduler struct {
	framework.NopScheduler
	tasks []protocol.TaskInfo

	mu      sync.Mutex
	sent    map[protocol.TaskID]time.Time
	running map[protocol.TaskID]time.Time
	errs    []error
	all     chan struct{}
}

func (s *latencyScheduler) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx := context.Background()
	for _, o := range offers {
		s.mu.Lock()
		todo := len(s.tasks)
		s.mu.Unlock()
		n := 0
		if todo > 0 {
			n = int(min(placement.HowMany(o.Resources, placement.ShapeOf(s.tasks[0], 1)), int64(todo)))
		}
		if n == 0 {
			_ = d.Decline(ctx, []protocol.OfferID{o.ID}, 0)
			continue
		}
		s.mu.Lock()
		batch := s.tasks[:n]
		s.tasks = s.tasks[n:]
		now := time.Now()
		for _, t := range batch {
			s.sent[t.TaskID] = now
		}
		s.mu.Unlock()
		if err := d.Launch(ctx, []protocol.OfferID{o.ID}, batch...); err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
		}
	}
}

func (s *latencyScheduler) StatusUpdate(_ *framework.Driver, st protocol.TaskStatus) {
	if st.State != protocol.TaskRunning {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.running[st.TaskID]; seen {
		return
	}
	s.running[st.TaskID] = time.Now()
	if len(s.running) == len(s.sent) && len(s.tasks) == 0 {
		close(s.all)
	}
}

// BenchmarkAgentLaunchLatency measures launch-to-RUNNING latency through
// the whole stack: an SDK framework launches 1 or 1,000 trivial tasks
// (`true`) at once on one real agent of a three-master cluster (Raft over TCP on loopback,
// production timeouts), and each task's latency runs from the moment the
// framework sends its accept to the moment RUNNING reaches the framework.
// Each task is a real process under its own supervisor (`allot
// task-shim`, built first). median-ms and p99-ms are over all tasks
// of all ops.
func BenchmarkAgentLaunchLatency(b *testing.B) {
	sizes := []int{1, 1000}
	if testing.Short() {
		sizes = []int{1, 20} // the smoke run (make bench-smoke)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) { benchAgentLaunchLatency(b, n) })
	}
}

func benchAgentLaunchLatency(b *testing.B, n int) {
	rc := raftstore.DefaultConfig()
	shim := allotBinary(b)
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := testcluster.New(b, testcluster.Options{
			Masters: 3, TCPRaft: true, AgentTimeout: 10 * time.Minute, RequestTimeout: 30 * time.Second,
			HeartbeatTimeout: rc.HeartbeatTimeout, ElectionTimeout: rc.ElectionTimeout,
			LeaderLeaseTimeout: rc.LeaderLeaseTimeout, CommitTimeout: rc.CommitTimeout,
		})
		executors.New(b, c, executors.Options{Configure: useBinaryShim(shim), Resources: protocol.Scalars(map[string]int64{
			protocol.ResCPUs: 64_000, protocol.ResMem: 64_000})})
		s := &latencyScheduler{sent: map[protocol.TaskID]time.Time{}, running: map[protocol.TaskID]time.Time{},
			all: make(chan struct{})}
		for j := range n {
			s.tasks = append(s.tasks, framework.NewTask(protocol.TaskID(fmt.Sprintf("t-%d-%d", i, j)), "true").
				CPUs(10).Mem(1).Build())
		}
		d, err := framework.NewDriver(s, framework.WithNATSURLs(c.NATSURL()), framework.WithName("latency"),
			framework.WithRequestTimeout(30*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Demand(context.Background(), placement.ShapeOf(s.tasks[0], int64(n))); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		go func() { done <- d.Run(ctx) }()
		select {
		case <-s.all:
		case <-time.After(2 * time.Minute):
			s.mu.Lock()
			b.Fatalf("%d of %d tasks RUNNING after 2 minutes (errors: %v)", len(s.running), n, s.errs)
		}
		b.StopTimer()
		cancel()
		<-done
		s.mu.Lock()
		for id, at := range s.running {
			lat = append(lat, at.Sub(s.sent[id]))
		}
		s.mu.Unlock()
		c.Close()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// useBinaryShim runs tasks under the allot binary's task-shim command
// rather than the test binary.
func useBinaryShim(bin string) func(*executor.Config) {
	return func(cfg *executor.Config) {
		cfg.Shim, cfg.ShimEnv = []string{bin, runner.ShimCommand}, nil
	}
}
