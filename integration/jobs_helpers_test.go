package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/jobrunner"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

// jobsWait bounds each wait of the job runner tests.
const jobsWait = 60 * time.Second

type jobsEnv struct {
	c     *testcluster.Cluster
	store *framework.Store
	dir   string // where tasks look for the files that make them exit
	// agents are the real agents, in the order they started.
	agents []*executors.Executor
}

func newJobsEnv(t *testing.T, agents int) *jobsEnv {
	return newJobsEnvWith(t, agents, testcluster.Options{Masters: 3})
}

// newJobsEnvWith is newJobsEnv on a cluster of opts.
func newJobsEnvWith(t *testing.T, agents int, opts testcluster.Options) *jobsEnv {
	c := testcluster.New(t, opts)
	var execs []*executors.Executor
	for range agents {
		execs = append(execs, executors.New(t, c, executors.Options{}))
	}
	s, err := framework.OpenStore(framework.WithNATSURLs(c.NATSURL()), framework.WithLogger(testlog.New(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return &jobsEnv{c: c, store: s, dir: dir, agents: execs}
}

// startRunner runs a job runner until stop is called or the test ends.
func (e *jobsEnv) startRunner(t *testing.T) (stop func()) {
	cfg := jobrunner.DefaultConfig()
	cfg.Connect = []framework.Option{framework.WithNATSURLs(e.c.NATSURL()), framework.WithRequestTimeout(2 * time.Second)}
	cfg.Interval, cfg.Logger = 100*time.Millisecond, testlog.New(t)
	r, err := jobrunner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

func (e *jobsEnv) submit(t *testing.T, src string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jobsWait)
	defer cancel()
	if _, err := jobs.Submit(ctx, e.store, "job.hcl", []byte(src), time.Now()); err != nil {
		t.Fatal(err)
	}
}

// tasks are the job's tasks the leader holds, by state, ended ones
// included.
func (e *jobsEnv) tasks(job string) map[protocol.TaskState][]protocol.TaskID {
	return e.tasksPrefixed(job + ".")
}

// tasksPrefixed are the tasks whose IDs start with prefix, by state.
func (e *jobsEnv) tasksPrefixed(prefix string) map[protocol.TaskState][]protocol.TaskID {
	out := map[protocol.TaskState][]protocol.TaskID{}
	m := e.c.Leader()
	if m == nil {
		return out
	}
	v := m.View()
	all := v.Tasks()
	for _, f := range v.Frameworks() {
		all = append(all, v.CompletedTasks(f.ID)...)
	}
	for _, tk := range all {
		if strings.HasPrefix(string(tk.ID), prefix) {
			out[tk.State] = append(out[tk.State], tk.ID)
		}
	}
	return out
}

// waitRunning waits until exactly n of the job's tasks run and no other
// is live.
func (e *jobsEnv) waitRunning(t *testing.T, job string, n int) []protocol.TaskID {
	t.Helper()
	var running []protocol.TaskID
	testutil.WaitFor(t, jobsWait, 20*time.Millisecond, func() error {
		byState := e.tasks(job)
		running = byState[protocol.TaskRunning]
		live := 0
		for st, ids := range byState {
			if !st.Terminal() {
				live += len(ids)
			}
		}
		if len(running) != n || live != n {
			return fmt.Errorf("%d running, %d live: %v", len(running), live, byState)
		}
		return nil
	})
	return running
}

func (e *jobsEnv) view(t *testing.T, name string) jobrunner.JobView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jobsWait)
	defer cancel()
	v, _, err := jobrunner.Read(ctx, e.store, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// failTask makes a task of the job's exit 1: each polls for a file named
// after its task ID.
func (e *jobsEnv) failTask(t *testing.T, id protocol.TaskID) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, string(id)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *jobsEnv) waitCommand() string {
	return fmt.Sprintf(`while [ ! -e %s/$ALLOT_TASK_ID ]; do sleep 0.05; done; exit 1`, e.dir)
}

// waitStable waits until version is the job's stable version with three
// healthy instances of it, calling check (when set) on every view.
func (e *jobsEnv) waitStable(t *testing.T, job string, version int, check func(jobrunner.JobView) error) {
	t.Helper()
	testutil.WaitFor(t, jobsWait, 20*time.Millisecond, func() error {
		v := e.view(t, job)
		if check != nil {
			if err := check(v); err != nil {
				t.Fatal(err)
			}
		}
		healthy := 0
		for _, in := range v.Instances {
			if in.Healthy && !in.State.Ended() && versionOf(in) == version {
				healthy++
			}
		}
		if v.Status.StableVersion != version || healthy != 3 {
			return fmt.Errorf("stable v%d, %d healthy of v%d: %+v", v.Status.StableVersion, healthy, version, v.Instances)
		}
		return nil
	})
}

// frameworkOf is the framework of the runner's task id, from the leader.
func (e *jobsEnv) frameworkOf(t *testing.T, id protocol.TaskID) protocol.FrameworkID {
	t.Helper()
	for _, tk := range e.c.WaitForLeader().View().Tasks() {
		if tk.ID == id {
			return tk.FrameworkID
		}
	}
	t.Fatalf("no task %s", id)
	return ""
}

func sortedRuns(t *testing.T, e *jobsEnv) []string {
	ctx, cancel := context.WithTimeout(context.Background(), jobsWait)
	defer cancel()
	names, err := jobrunner.Names(ctx, e.store)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// versionOf is the version an instance counts as.
func versionOf(in jobs.LiveInstance) int {
	if in.Version > 0 {
		return in.Version
	}
	_, ji, _ := jobs.ParseInstanceID(in.ID)
	return ji.Version
}

func sleeper(count int) string {
	return fmt.Sprintf(`job "keep" {
  group "g" {
    count = %d
    restart {
      attempts = 10
      interval = "1h"
      delay    = "100ms"
    }
    task "t" {
      command = "sleep"
      args    = ["300"]
      resources {
        cpus = 0.1
        mem  = "16M"
      }
    }
  }
}`, count)
}
