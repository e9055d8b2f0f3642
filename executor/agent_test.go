//go:build linux

package executor

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

func TestAgent_RegistersAndIsOffered(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	a := startAgent(t, cfg)
	if a.ID() == "" {
		t.Fatal("no agent id after Ready")
	}
	data, err := os.ReadFile(filepath.Join(cfg.WorkDir, agentFile))
	if err != nil || !strings.Contains(string(data), string(a.ID())) {
		t.Fatalf("agent.json: %q, %v; want the agent id %s", data, err, a.ID())
	}
	ag, ok := c.WaitForLeader().View().Agent(a.ID())
	if !ok {
		t.Fatal("the master does not know the agent")
	}
	if ag.Hostname != "agent-test" || ag.HTTPAddr != a.HTTPAddr() || !ag.Resources.Equal(cfg.Resources) {
		t.Fatalf("master has %s %s %s, want agent-test %s %s", ag.Hostname, ag.HTTPAddr, ag.Resources, a.HTTPAddr(), cfg.Resources)
	}
	for _, k := range []string{"rack", "os", "arch", "hostname"} {
		if _, ok := ag.Attributes[k]; !ok {
			t.Errorf("attribute %s missing: %v", k, ag.Attributes)
		}
	}
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	if o := offerOn(t, f, a.ID()); !o.Resources.Equal(cfg.Resources) || o.Attributes["rack"].Text != "r1" {
		t.Fatalf("offer %s %v, want the agent's resources %s and rack r1", o.Resources, o.Attributes, cfg.Resources)
	}
	var health map[string]string
	getJSON(t, "http://"+a.HTTPAddr()+"/healthz", "", &health)
	if health["status"] != "ok" {
		t.Fatalf("healthz: %v", health)
	}
}

func TestAgent_TaskFinishes(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})

	hi := shellTask("hi", "echo hi; exit 0")
	env := shellTask("env", `echo "$ALLOT_TASK_ID|$ALLOT_FRAMEWORK_ID|$ALLOT_AGENT_ID|$PORT0|$PORT1|$ALLOT_PORTS|$FOO|$ALLOT_FILES_TOKEN"`)
	env.Resources.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31003, End: 31004}}}
	env.Command.Env = map[string]string{"FOO": "bar", "ALLOT_TASK_ID": "overridden"}
	launch(t, f, a.ID(), hi, env)

	for _, id := range []string{"hi", "env"} {
		st := waitState(t, f, id, protocol.TaskFinished)
		if st.ExitCode == nil || *st.ExitCode != 0 {
			t.Errorf("%s: exit code %v, want 0", id, st.ExitCode)
		}
		want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished}
		if got := uniqueStates(f.Statuses(protocol.TaskID(id))); !equalStates(got, want) {
			t.Errorf("%s: got %v, want %v", id, got, want)
		}
	}
	sandbox := sandboxOf(t, a, f.ID(), "hi")
	if code, body := readFile(t, a, sandbox+"/stdout", a.FilesToken()); code != http.StatusOK || body != "hi\n" {
		t.Fatalf("stdout: %d %q, want 200 \"hi\\n\"", code, body)
	}
	if code, _ := readFile(t, a, sandbox+"/stdout", ""); code != http.StatusUnauthorized {
		t.Fatalf("stdout without the token: %d, want 401", code)
	}
	// Without a shared secret, framework tokens are keyed by the files
	// token; the task's own token reads its framework's sandboxes, for
	// FilesTokenTTL (default one day) from its launch.
	want := strings.Join([]string{"env", string(f.ID()), string(a.ID()), "31003", "31004", "31003,31004", "bar"}, "|") + "|"
	_, body := readFile(t, a, sandboxOf(t, a, f.ID(), "env")+"/stdout", a.FilesToken())
	fwToken, ok := strings.CutPrefix(strings.TrimSuffix(body, "\n"), want)
	if !ok {
		t.Fatalf("task environment: got %q, want %q and the files token", body, want)
	}
	if id, ok := protocol.CheckFrameworkFilesToken(a.FilesToken(), fwToken, time.Now()); !ok || id != f.ID() {
		t.Fatalf("task files token %q: got %q %v, want a valid token of %s", fwToken, id, ok, f.ID())
	}
	if _, ok := protocol.CheckFrameworkFilesToken(a.FilesToken(), fwToken, time.Now().Add(DefaultFilesTokenTTL)); ok {
		t.Fatalf("task files token %q is still valid a day after the launch", fwToken)
	}
	if code, body := readFile(t, a, sandbox+"/stdout", fwToken); code != http.StatusOK || body != "hi\n" {
		t.Fatalf("stdout with the framework token: %d %q, want 200", code, body)
	}
}

func TestAgent_TaskFailsWithExitCode(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	launch(t, f, a.ID(), shellTask("three", "echo oops >&2; exit 3"))
	st := waitState(t, f, "three", protocol.TaskFailed)
	if st.ExitCode == nil || *st.ExitCode != 3 || st.Reason != protocol.ReasonCommandFailed || !strings.Contains(st.Message, "oops") {
		t.Fatalf("got %+v (exit %v), want exit 3, command_failed, stderr in the message", st, st.ExitCode)
	}
}

func TestAgent_Kill(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	long := shellTask("long", "exec sleep 60")
	long.KillGracePeriod = time.Minute // sleep dies on SIGTERM
	stubborn := shellTask("stubborn", `trap '' TERM; sleep 60 & touch ready; wait`)
	stubborn.KillGracePeriod = 300 * time.Millisecond
	launch(t, f, a.ID(), long, stubborn)
	waitState(t, f, "long", protocol.TaskRunning)
	waitState(t, f, "stubborn", protocol.TaskRunning)
	sandbox := sandboxOf(t, a, f.ID(), "stubborn")
	waitFileExists(t, filepath.Join(a.SandboxRoot(), sandbox, "ready"))

	if err := f.Kill("long"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, f, "long", protocol.TaskKilled)
	if st.Reason != protocol.ReasonKilledByFramework {
		t.Fatalf("got %+v, want killed_by_framework", st)
	}
	want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskKilling, protocol.TaskKilled}
	if got := uniqueStates(f.Statuses("long")); !equalStates(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	killed := time.Now()
	if err := f.Kill("stubborn"); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, f, "stubborn", protocol.TaskKilled)
	if took := time.Since(killed); took < stubborn.KillGracePeriod {
		t.Fatalf("killed after %s, before the %s grace", took, stubborn.KillGracePeriod)
	}
	if st.Reason != protocol.ReasonKilledByFramework || !strings.Contains(st.Message, "SIGKILL") {
		t.Fatalf("got %+v, want killed_by_framework with SIGKILL after the grace", st)
	}
}

func TestAgent_MemoryLimit(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	hog := protocol.TaskInfo{
		TaskID:    "hog",
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 100, protocol.ResMem: 64}),
		Command:   protocol.CommandInfo{Value: os.Args[0], Env: map[string]string{envHelper: "alloc"}},
	}
	launch(t, f, a.ID(), hog)
	st := waitState(t, f, "hog", protocol.TaskFailed)
	if st.Reason != protocol.ReasonMemoryLimit || !strings.Contains(st.Message, "64 MiB") {
		t.Fatalf("got %+v, want memory_limit over 64 MiB", st)
	}
}

func equalStates(a, b []protocol.TaskState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func waitFileExists(t *testing.T, path string) {
	t.Helper()
	testutilWaitFor(t, func() error {
		_, err := os.Stat(path)
		return err
	})
}
