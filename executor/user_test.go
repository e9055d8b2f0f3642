//go:build linux

package executor

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// needUsers skips the test unless it runs as root, which alone runs tasks
// as other users, and every user named exists here.
func needUsers(t *testing.T, names ...string) map[string]*user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running tasks as other users needs the agent to run as root")
	}
	out := map[string]*user.User{}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			t.Skipf("no user %q on this machine: %v", n, err)
		}
		out[n] = u
	}
	return out
}

// Tasks run as their user (the agent's TaskUser when they name none) in
// sandboxes of their own: a task of another user can neither list nor read
// them, nor the directory that holds them. Command health checks run as
// the task's user too.
func TestAgent_TasksRunAsTheirUser(t *testing.T) {
	t.Parallel()
	users := needUsers(t, "nobody", "daemon")
	c := newCluster(t)
	cfg := testConfig(t, c, testutil.TraversableTempDir(t))
	cfg.TaskUser = "nobody"
	a := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})

	own := shellTask("own", `id -u > uid; id -g > gid; echo s3cret > secret; cat "$ALLOT_SANDBOX/secret"`)
	svc := shellTask("svc", "exec sleep 60")
	svc.HealthCheck = &protocol.HealthCheck{Type: protocol.HealthCheckCommand, Command: `[ "$(id -u)" = ` + users["nobody"].Uid + ` ]`,
		Interval: 100 * time.Millisecond, Timeout: 2 * time.Second}
	launch(t, f, a.ID(), own, svc)
	waitState(t, f, "own", protocol.TaskFinished)
	sandbox := sandboxOf(t, a, f.ID(), "own")
	for file, want := range map[string]string{"uid": users["nobody"].Uid, "gid": users["nobody"].Gid, "stdout": "s3cret"} {
		if _, body := readFile(t, a, sandbox+"/"+file, a.FilesToken()); strings.TrimSpace(body) != want {
			t.Errorf("%s of the task as nobody: got %q, want %s", file, body, want)
		}
	}

	// Each breach exits with its own code: the task finishes only if all
	// of them were refused.
	peer := shellTask("peer", `if cat "$ALLOT_SANDBOX/../`+sandbox+`/secret"; then exit 10; fi
if ls "$ALLOT_SANDBOX/../`+sandbox+`"; then exit 11; fi
if ls "$ALLOT_SANDBOX/.."; then exit 12; fi
if ls "$ALLOT_SANDBOX/../.."; then exit 13; fi
id -u > uid`)
	peer.Command.User = "daemon"
	launch(t, f, a.ID(), peer)
	st := waitFinal(t, f, "peer")
	if st.State != protocol.TaskFinished {
		t.Fatalf("the task as daemon: got %+v (exit %v), want FINISHED: it read another user's sandbox", st, exitCode(st))
	}
	peerBox := sandboxOf(t, a, f.ID(), "peer")
	if _, body := readFile(t, a, peerBox+"/uid", a.FilesToken()); strings.TrimSpace(body) != users["daemon"].Uid {
		t.Errorf("uid of the task as daemon: got %q, want %s", body, users["daemon"].Uid)
	}
	if _, body := readFile(t, a, peerBox+"/stderr", a.FilesToken()); strings.Count(body, "Permission denied") != 4 {
		t.Errorf("stderr of the task as daemon: got %q, want four refusals", body)
	}
	waitHealth(t, f, "svc", 0, true)
}

// A task cannot tamper with what the agent keeps of it: whatever it does
// to the old record location in its sandbox, to its sandbox's name, to
// its stdout and stderr and to the directories above, the agent (also
// after a restart) reports the exit code the task really had, and nothing
// appears outside the sandbox.
func TestAgent_TaskCannotTamperWithRecords(t *testing.T) {
	t.Parallel()
	needUsers(t, "nobody")
	c := newCluster(t)
	work := testutil.TraversableTempDir(t)
	// World-writable, so that only the agent's writes, and none of the
	// task's, could ever land here through a symlink.
	outside := filepath.Join(filepath.Dir(work), "outside")
	if err := os.Mkdir(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, c, work)
	cfg.TaskUser = "nobody"
	p1 := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	// Every step is expected to fail or to change the task's own files
	// only; none may stop the script, and their complaints go nowhere, so
	// that stderr holds the one line the task wrote.
	script := `S="$ALLOT_SANDBOX"; O=` + outside + `; N=$(basename "$S")
echo before >&2
{
rm -rf "$S/.allot"; ln -s "$O" "$S/.allot"
rm -f stdout stderr; ln -s "$O/out" stdout; ln -s "$O/err" stderr
rm -rf "$S/../../control" "$S/../../control/$N"
echo '{"code":0}' > "$S/../../control/$N/exit.json"
mkdir "$S/../../control/$N.x"; ln -s "$O" "$S/../../control/$N/x"
mv "$S" "$S.moved"; ln -s "$O" "$S.moved"; ln -s "$O" "$S/../link"
touch "$S/../planted" "$S/../../planted" "$S/../../tasks.journal"
} 2>/dev/null
touch tampered
while [ ! -e go ]; do sleep 0.02; done
exit 7`
	launch(t, f, p1.ID(), shellTask("tamper", script))
	waitState(t, f, "tamper", protocol.TaskRunning)
	sandbox := sandboxOf(t, p1, f.ID(), "tamper")
	waitFileExists(t, filepath.Join(p1.SandboxRoot(), sandbox, "tampered"))

	p1.stop(t)
	p2 := startAgent(t, cfg)
	waitAgentTask(t, p2.Agent, f.ID(), "tamper", protocol.TaskRunning)
	touch(t, p2.Agent, sandbox, "go")
	st := waitFinal(t, f, "tamper")
	if st.State != protocol.TaskFailed || exitCode(st) != 7 || st.Reason != protocol.ReasonCommandFailed || !strings.HasSuffix(st.Message, ": before") {
		t.Fatalf("got %+v (exit %d), want FAILED, exit 7, command_failed with the stderr the task wrote", st, exitCode(st))
	}

	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("files appeared through the task's symlinks: %v", names(entries))
	}
	for dir, want := range map[string][]string{
		work:                            {agentFile, lockFile, "control", "sandboxes", "tasks.journal"},
		p2.SandboxRoot():                {sandbox},
		filepath.Join(work, controlDir): {sandbox},
	} {
		entries, err := os.ReadDir(dir)
		if got := names(entries); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s holds %v (%v), want %v", dir, got, err, want)
		}
	}
	records, err := os.ReadDir(filepath.Join(work, controlDir, sandbox))
	if err != nil || !slices.Equal(names(records), []string{"exit.json", "shim.json", "shim.log", "spec.json"}) {
		t.Errorf("the task's records: got %v (%v)", names(records), err)
	}
}

// waitFinal waits for a task's terminal status and returns it.
func waitFinal(t *testing.T, f *testcluster.TestFramework, id string) protocol.TaskStatus {
	t.Helper()
	var out protocol.TaskStatus
	testutilWaitFor(t, func() error {
		for _, s := range f.Statuses(protocol.TaskID(id)) {
			if s.State.Terminal() {
				out = s
				return nil
			}
		}
		return errors.New("task " + id + " has not ended")
	})
	return out
}

// exitCode returns a status's exit code, -1 without one.
func exitCode(st protocol.TaskStatus) int {
	if st.ExitCode == nil {
		return -1
	}
	return *st.ExitCode
}

func names(entries []os.DirEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out
}

// A task whose user the agent does not know never starts: ERROR,
// task_invalid, naming the user. An agent configured with such a default
// user does not start at all.
func TestAgent_UnknownTaskUser(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	bad := cfg
	bad.TaskUser = "no-such-user-allot"
	if _, err := New(bad); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `"no-such-user-allot"`) {
		t.Fatalf("task user unknown: got %v, want ErrConfig naming the user", err)
	}
	a := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	task := shellTask("ghost", "touch ran")
	task.Command.User = "no-such-user-allot"
	launch(t, f, a.ID(), task)
	st := waitFinal(t, f, "ghost")
	if st.State != protocol.TaskError || st.Reason != protocol.ReasonTaskInvalid || !strings.Contains(st.Message, `"no-such-user-allot"`) {
		t.Fatalf("got %+v, want ERROR, task_invalid, naming the user", st)
	}
	if _, err := os.Stat(filepath.Join(a.SandboxRoot(), sandboxOf(t, a, f.ID(), "ghost"), "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the task ran: %v", err)
	}
}
