package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// mpiWait bounds one run of the MPI example.
const mpiWait = 60 * time.Second

// mpiCluster is one master and three real agents, racks r1, r1 and r2.
// They share this machine, as the tests do, so each has ports of its own:
// agent i (from 0) has the ten from base+100·(i+1).
func mpiCluster(t *testing.T, base uint64) (*testcluster.Cluster, []*executors.Executor) {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	var agents []*executors.Executor
	for i, rack := range []string{"r1", "r1", "r2"} {
		first := base + 100*uint64(i+1)
		agents = append(agents, executors.New(t, c, executors.Options{
			Hostname:   fmt.Sprint("mpi-", i),
			Attributes: protocol.Attributes{"rack": protocol.Text(rack)},
			Resources: protocol.Resources{
				Scalars: map[string]int64{protocol.ResCPUs: 4000, protocol.ResMem: 2048},
				Ranges:  map[string]protocol.Ranges{protocol.ResPorts: {{Begin: first, End: first + 9}}},
			},
		}))
	}
	return c, agents
}

// runMPI runs `mpi run` with args against c and returns its stdout and
// exit status; its stderr goes to the test log.
func runMPI(t *testing.T, c *testcluster.Cluster, args ...string) (string, int) {
	t.Helper()
	bin := exampleBinary(t, "mpi")
	ctx, cancel := context.WithTimeout(context.Background(), mpiWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--nats", c.NATSURL()}, args...)...)
	cmd.Env = os.Environ()
	if raceEnabled {
		cmd.Env = append(cmd.Env, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("mpi run %s: %v after %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err,
		time.Since(start).Round(time.Millisecond), stdout.String(), stderr.String())
	if ctx.Err() != nil {
		t.Fatalf("mpi run did not end within %s", mpiWait)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("mpi run: %v", err)
	}
	return stdout.String(), cmd.ProcessState.ExitCode()
}

// checkNothingLeft waits until the master holds no framework, task or
// offer, and no agent runs a task: the run's teardown removed
// everything.
func checkNothingLeft(t *testing.T, c *testcluster.Cluster, agents []*executors.Executor) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		doc := httpState(t, c)
		if len(doc.Frameworks) != 0 || len(doc.Tasks) != 0 || len(doc.Offers) != 0 {
			return fmt.Errorf("master state: %d frameworks, %d tasks, %d offers, want none",
				len(doc.Frameworks), len(doc.Tasks), len(doc.Offers))
		}
		for _, e := range agents {
			for _, ts := range e.Agent().State().Tasks {
				if !ts.State.Terminal() {
					return fmt.Errorf("agent %s: task %s is %s", e.Agent().State().Hostname, ts.TaskID, ts.State)
				}
			}
		}
		return nil
	})
}

// TestMPI_Ring runs the example's ranks on real agents: three ranks one
// per agent, then three ranks in rack r1 (two agents). The ranks find
// rank 0 through their environment, run the ring allreduce and the pi
// integration, and the framework checks rank 0's results against its own
// and exits 0.
func TestMPI_Ring(t *testing.T) {
	t.Parallel()
	exampleBinary(t, "mpi") // built before the cluster starts
	c, agents := mpiCluster(t, 30000)
	for _, tc := range []struct {
		name    string
		args    []string
		perHost map[string]int // ranks each agent must run, by hostname; nil: rack r1
	}{
		{"spread", []string{"--placement", "spread"}, map[string]int{"mpi-0": 1, "mpi-1": 1, "mpi-2": 1}},
		{"rack", []string{"--placement", "rack", "--rack", "r1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runMPI(t, c, append(tc.args, "--ranks", "3", "--vector-len", "1000",
				"--intervals", "20000", "--deadline", "10s", "--timeout", "45s")...)
			if code != 0 {
				t.Fatalf("mpi run exited %d, want 0", code)
			}
			for _, want := range []string{
				`all 3 ranks FINISHED`,
				`checksum expected \d+, got \d+: ok`,
				`pi = 3\.14159265\d+, error vs math\.Pi \S+ \(bound \S+\): ok`,
				`pi recomputed locally \S+, difference \S+ \(tolerance \S+\): ok`,
				`verified: allreduce and pi match the local recomputation, 3 of 3 ranks agree`,
			} {
				if !regexp.MustCompile(want).MatchString(out) {
					t.Errorf("output lacks %q", want)
				}
			}
			if m := regexp.MustCompile(`checksum expected (\d+), got (\d+)`).FindStringSubmatch(out); m == nil || m[1] != m[2] {
				t.Errorf("checksum line: %q", m)
			}
			m := regexp.MustCompile(`framework (fw-\S+) subscribed`).FindStringSubmatch(out)
			if m == nil {
				t.Fatal("output names no framework")
			}
			fw := protocol.FrameworkID(m[1])
			// Every rank FINISHED, where the placement wants it.
			ranks := map[string]int{}
			for _, e := range agents {
				st := e.Agent().State()
				for _, ts := range st.Tasks {
					if ts.FrameworkID != fw {
						continue
					}
					if ts.State != protocol.TaskFinished {
						t.Errorf("agent %s: %s ended %s, want FINISHED", st.Hostname, ts.TaskID, ts.State)
					}
					ranks[st.Hostname]++
				}
			}
			if tc.perHost != nil && fmt.Sprint(ranks) != fmt.Sprint(tc.perHost) {
				t.Errorf("ranks per agent %v, want %v", ranks, tc.perHost)
			}
			if tc.perHost == nil && (ranks["mpi-2"] != 0 || ranks["mpi-0"]+ranks["mpi-1"] != 3) {
				t.Errorf("ranks per agent %v, want all 3 in rack r1 (mpi-0, mpi-1)", ranks)
			}
			checkNothingLeft(t, c, agents)
		})
	}
}

// TestMPI_GangDoesNotFit: a gang that cannot be placed (four ranks, one
// per agent, on three agents; or a rack no agent is in) is given up at
// its deadline: the framework says what it wanted and what it was
// offered, exits non-zero, and leaves nothing running or held.
func TestMPI_GangDoesNotFit(t *testing.T) {
	t.Parallel()
	exampleBinary(t, "mpi")
	c, agents := mpiCluster(t, 30300)
	for _, tc := range []struct {
		name string
		args []string
		want []string // regular expressions
	}{
		{"more ranks than agents", []string{"--ranks", "4", "--placement", "spread"}, []string{
			`cannot place 4 ranks within 2s: wanted one rank per agent \(unique hostname\)`,
			`offers came from 3 agent\(s\)`,
			`those offers hold at most 3 of the 4 ranks`,
		}},
		// The master offers the agents that fail the rack constraint only
		// when they come before the gang's demand.
		{"no such rack", []string{"--ranks", "2", "--placement", "rack", "--rack", "r9"}, []string{
			`cannot place 2 ranks within 2s: wanted all ranks in one rack \(same rack\), rack == r9`,
			`no agent was offered: .* pass \[rack same, rack == "r9"\]|no offered agent passes \[rack same, rack == "r9"\]`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out, code := runMPI(t, c, append(tc.args, "--deadline", "2s", "--timeout", "30s")...)
			if code != 1 {
				t.Errorf("mpi run exited %d, want 1", code)
			}
			for _, want := range append(tc.want, "nothing was launched") {
				if !regexp.MustCompile(want).MatchString(out) {
					t.Errorf("output lacks %q", want)
				}
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("mpi run took %s to give up on a 2s deadline", took)
			}
			checkNothingLeft(t, c, agents)
			for _, e := range agents {
				if ts := e.Agent().State().Tasks; len(ts) != 0 {
					t.Errorf("agent %s ran %d tasks, want none", e.Agent().State().Hostname, len(ts))
				}
			}
		})
	}
}
