package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// mapReduceWait bounds one run of the MapReduce example: it guards against
// a hung run, and is the job's give-up deadline. A word count of 64 maps
// (TestMapReduce_AgentKilledDuringMaps) took a minute on two cores shared
// with four busy loops and the package's other tests, and was killed at a
// bound of one minute while verifying its output.
const mapReduceWait = 3 * time.Minute

// mapReduceAgents starts three real agents of two CPUs each: with tasks
// of one CPU, a job's four map tasks need two agents at least, so the
// shuffle crosses agents. The tests' tasks ask for 64 MiB: the workers
// are built with the race detector, and a reducer of a 2 MB word count
// reached 33 MiB resident.
func mapReduceAgents(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	for i := range 3 {
		executors.New(t, c, executors.Options{
			Hostname:  fmt.Sprint("mr-", i),
			Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 2000, protocol.ResMem: 1024}),
		})
	}
}

// mapReduceRun is `mapreduce run` as a process of its own, with its
// output collected line by line.
type mapReduceRun struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   bytes.Buffer
	lines chan string // every stdout line, until closed at EOF
	done  chan error
}

// startMapReduce runs the MapReduce example against c with args after
// "run --nats URL". Its output goes to the test log at the end.
func startMapReduce(t *testing.T, c *testcluster.Cluster, args ...string) *mapReduceRun {
	t.Helper()
	return startMapReduceBinary(t, c, exampleBinary(t, "mapreduce"), args...)
}

// startMapReduceBinary is startMapReduce with the example built at bin.
func startMapReduceBinary(t *testing.T, c *testcluster.Cluster, bin string, args ...string) *mapReduceRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mapReduceWait)
	t.Cleanup(cancel)
	argv := append([]string{"run", "--nats", c.NATSURL(), "--deadline", mapReduceWait.String(), "--verify"}, args...)
	r := &mapReduceRun{lines: make(chan string, 1024), done: make(chan error, 1)}
	r.cmd = exec.CommandContext(ctx, bin, argv...)
	// Also reaches the workers: the framework passes GORACE on.
	r.cmd.Env = append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	r.cmd.Stderr = &stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.mu.Lock()
			r.out.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			select {
			case r.lines <- sc.Text():
			default: // nobody follows the lines; the buffer keeps them
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(r.lines)
		r.done <- r.cmd.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
		r.done <- nil
		t.Logf("mapreduce %s\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), r.output(), stderr.String())
	})
	return r
}

func (r *mapReduceRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// wait waits for the process to exit and returns its output.
func (r *mapReduceRun) wait(t *testing.T) string {
	t.Helper()
	err := <-r.done
	r.done <- err
	if err != nil {
		t.Fatalf("mapreduce run: %v", err)
	}
	return r.output()
}

var remoteFetches = regexp.MustCompile(`shuffle: (\d+) partition files, (\d+) from other agents`)

// checkVerified checks that every job in ids reported verified output,
// and returns how many partition files the reducers fetched in all, and
// how many of them from other agents.
func checkVerified(t *testing.T, out string, ids ...string) (total, remote int) {
	t.Helper()
	for _, id := range ids {
		block := jobBlock(out, id)
		if block == "" {
			t.Errorf("no report for job %s", id)
			continue
		}
		if !strings.Contains(block, " verified: ") || strings.Contains(block, "MISMATCH") || strings.Contains(block, "FAILED") {
			t.Errorf("job %s not verified:\n%s", id, block)
		}
		if !strings.Contains(block, "JCT ") || !strings.Contains(block, "on leftover offers") {
			t.Errorf("job %s: no completion time or task kinds:\n%s", id, block)
		}
		m := remoteFetches.FindStringSubmatch(block)
		if m == nil {
			t.Errorf("job %s: no shuffle figures:\n%s", id, block)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		k, _ := strconv.Atoi(m[2])
		total += n
		remote += k
	}
	if !strings.Contains(out, fmt.Sprintf("all jobs verified (%d)", len(ids))) {
		t.Errorf("no summary line saying all %d jobs were verified", len(ids))
	}
	if !strings.Contains(out, "declined as leftover: ") {
		t.Errorf("no leftover figures")
	}
	return total, remote
}

// jobBlock returns the lines of the report of job id.
func jobBlock(out, id string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(out) {
		in = strings.HasPrefix(line, "job "+id+" ") || in && strings.HasPrefix(line, "  ")
		if in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestMapReduce_WordCountAndSort runs the MapReduce example, a word count
// and a sort in two roles, on three real agents: both jobs finish with
// output that matches a single-process computation, and the reducers
// fetch map output from other agents (the shuffle crosses agents).
func TestMapReduce_WordCountAndSort(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	mapReduceAgents(t, c)
	r := startMapReduce(t, c, "--jobs", "wordcount:256KB@analytics,sort:128KB@batch",
		"--maps", "4", "--reducers", "2", "--cpus", "1000", "--mem", "64")
	out := r.wait(t)
	total, remote := checkVerified(t, out, "wordcount-1", "sort-2")
	if total != 2*4*2 {
		t.Errorf("reducers fetched %d partition files, want %d (2 jobs × 2 reducers × 4 maps)", total, 2*4*2)
	}
	if remote == 0 {
		t.Errorf("no partition file came from another agent:\n%s", out)
	}
	if !strings.Contains(out, "sort check verified") || !strings.Contains(out, "word counts verified") {
		t.Errorf("want a verified word count and a verified sort check:\n%s", out)
	}
	// Each shuffle was registered as a coflow and is gone by now:
	// completed once the agents reported every fetch, or withdrawn when
	// its job ended (which may beat the last report).
	if strings.Contains(out, "coflow not registered") {
		t.Errorf("a shuffle was not registered as a coflow:\n%s", out)
	}
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		got, ok := c.WaitForLeader().Coflows()
		switch {
		case !ok:
			return fmt.Errorf("no leader serving")
		case len(got.Coflows) != 0:
			return fmt.Errorf("the leader still holds coflows %+v", got.Coflows)
		case got.Completed == 0:
			return fmt.Errorf("no shuffle completed as a coflow")
		}
		t.Logf("%d of 2 shuffles completed as coflows", got.Completed)
		return nil
	})

	// The same on an input directory (the agents run on this machine).
	dir := t.TempDir()
	for i, text := range []string{
		strings.Repeat("the quick brown fox jumps over the lazy dog\n", 300),
		"no newline at the end: Fox, DOG; fox!",
		strings.Repeat("zebra apple mango\nkiwi\n\n", 200),
	} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("part", i, ".txt")), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = startMapReduce(t, c, "--input", dir, "--jobs", "wordcount,sort", "--maps", "3", "--reducers", "2",
		"--cpus", "1000", "--mem", "64")
	out = r.wait(t)
	checkVerified(t, out, "wordcount-1", "sort-2")
}

// TestMapReduce_LeaderKilled kills the master leader once a word count's
// first map tasks have finished: the SDK finds the new leader by itself,
// and the job still finishes with the right answer.
func TestMapReduce_LeaderKilled(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	mapReduceAgents(t, c)
	r := startMapReduce(t, c, "--jobs", "wordcount:2MB@analytics", "--maps", "8", "--reducers", "2",
		"--cpus", "1000", "--mem", "64")
	mapsDone := regexp.MustCompile(`\] wordcount-1: map \d+ finished on .* \((\d+)/8\)`)
	killed := false
	for line := range r.lines {
		if m := mapsDone.FindStringSubmatch(line); m != nil && !killed {
			old := c.KillLeader()
			killed = true
			t.Logf("map tasks finished: %s; killed leader %s", m[1], c.NodeID(old))
			if m[1] == "8" {
				t.Errorf("every map task had finished before the leader was killed")
			}
		}
	}
	if !killed {
		t.Fatalf("no map task finished")
	}
	leader := c.WaitForLeader()
	t.Logf("%s leads", leader.ID())
	out := r.wait(t)
	checkVerified(t, out, "wordcount-1")
}

// TestMapReduce_AgentLost stops an agent as soon as a map task of a word
// count has finished on it: that map's output is gone, so the framework
// runs the map again elsewhere (as Hadoop re-runs the maps of a lost
// node), when a reducer fails to fetch it or when the master reports the
// agent lost, whichever comes first; the reducers retry once it has
// finished, and the job still finishes with the right answer.
func TestMapReduce_AgentLost(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	agents := map[protocol.AgentID]*executors.Executor{}
	for i := range 3 {
		e := executors.New(t, c, executors.Options{
			Hostname:  fmt.Sprint("mr-", i),
			Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 2000, protocol.ResMem: 1024}),
		})
		agents[e.ID()] = e
	}
	r := startMapReduce(t, c, "--jobs", "wordcount:2MB@analytics", "--maps", "8", "--reducers", "2",
		"--cpus", "1000", "--mem", "64")
	mapDone := regexp.MustCompile(`\] wordcount-1: map (\d+) finished on (\S+) \((\d+)/8\)`)
	var stopped protocol.AgentID
	for line := range r.lines {
		m := mapDone.FindStringSubmatch(line)
		if m == nil || stopped != "" {
			continue
		}
		stopped = protocol.AgentID(m[2])
		e, ok := agents[stopped]
		if !ok {
			t.Fatalf("map %s finished on unknown agent %s", m[1], stopped)
		}
		e.Stop()
		t.Logf("map %s finished on %s (%s/8 maps done): agent stopped", m[1], stopped, m[3])
	}
	if stopped == "" {
		t.Fatal("no map task finished")
	}
	out := r.wait(t)
	checkVerified(t, out, "wordcount-1")
	// Whichever comes first: a reducer's failure to fetch, or the
	// master's word that the agent is lost (mapreduce_agent_killed_test.go).
	rerun := regexp.MustCompile(`wordcount-1: map \d+ runs again: (reducer \d+ could not fetch its output from|its output was on agent) ` +
		regexp.QuoteMeta(string(stopped)))
	if !rerun.MatchString(out) {
		t.Errorf("no map ran again for its output on the stopped agent %s:\n%s", stopped, out)
	}
}
