package integration

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
)

// TestCLI_TaskLogs: `allot tasks logs` prints the last lines of a finished
// task's stdout, or its stderr, from the agent it ran on, with the files
// token the masters hand the operator.
func TestCLI_TaskLogs(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1, Configure: func(_ int, cfg *master.Config) {
		cfg.OperatorToken = "op"
	}})
	e := executors.New(t, c, executors.Options{})
	rec := newRecorder()
	// A failover timeout, so that a loaded machine's late heartbeat does
	// not end the framework and kill its task.
	f := runDriver(t, newDriver(t, c, rec, framework.WithFailoverTimeout(time.Minute)), rec)
	f.launch(t, e.ID(), shTask("greet", "for i in 1 2 3 4 5; do echo line $i; done; echo oops >&2"))
	rec.WaitState(t, "greet", protocol.TaskFinished)

	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(allotBinary(t), append([]string{"tasks", "logs", string(f.d.ID()), "greet",
			"--masters", c.WaitForLeader().HTTPAddr()}, args...)...)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	if out, errOut, err := run("--lines", "2", "--token", "op"); err != nil || out != "line 4\nline 5\n" {
		t.Fatalf("logs --lines 2: %q, %q, %v; want the last two lines", out, errOut, err)
	}
	if out, errOut, err := run("--stderr", "--token", "op"); err != nil || out != "oops\n" {
		t.Fatalf("logs --stderr: %q, %q, %v", out, errOut, err)
	}
	if _, errOut, err := run(); err == nil || !strings.Contains(errOut, "operator token") {
		t.Fatalf("logs without the token: %q, %v; want a refusal naming the operator token", errOut, err)
	}
}
