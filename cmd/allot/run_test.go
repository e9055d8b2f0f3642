package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
)

// startDev runs `allot dev` (three masters, two agents) until the test ends
// and returns the environment it prints for clients.
func startDev(t *testing.T) []string {
	t.Helper()
	cmd := allotCommand(nil, "dev", "--data-dir", t.TempDir(), "--masters", "3", "--agents", "2",
		"--agent-resources", "cpus=1000,mem=512", "--nats-port", "0", "--http-port", "0", "--raft-port", "0",
		"--isolation", "portable", "--log-level", "warn")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	})
	var env []string
	sc := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "export "); ok {
			env = append(env, rest)
		}
		if strings.Contains(line, "resumes it") {
			go func() {
				for sc.Scan() {
				}
			}()
			return env
		}
	}
	t.Fatalf("allot dev printed no instructions:\n%s", errb.String())
	return nil
}

// runWithEnv runs allot with args and extra environment.
func runWithEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runAllotEnv(t, env, "", args...)
}

// allot run prints a command's output and exits with its exit code; with
// several instances each line says which; Ctrl-C kills the instances and
// leaves nothing of the framework running or held.
func TestRun_onDevCluster(t *testing.T) {
	t.Parallel()
	env := startDev(t)
	out, errOut, code := runWithEnv(t, env, "run", "--", "sh", "-c", "echo hi; echo oops >&2; exit 3")
	if code != 3 || out != "hi\n" || !strings.Contains(errOut, "oops") {
		t.Fatalf("allot run -- sh -c 'echo hi; exit 3': exit %d, stdout %q, stderr %q; want 3, hi and oops", code, out, errOut)
	}
	out, errOut, code = runWithEnv(t, env, "run", "--count", "2", "--cpus", "0.2", "--mem", "32M", "--",
		"sh", "-c", `echo "from $ALLOT_TASK_ID"`)
	if code != 0 || !strings.Contains(out, "[0] from run-0\n") || !strings.Contains(out, "[1] from run-1\n") {
		t.Fatalf("allot run --count 2: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	cmd := allotCommand(env, "run", "--kill-grace", "1s", "--", "sh", "-c", "echo started; exec sleep 300")
	var runOut, runErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &runOut, &runErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	masters := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ALLOT_MASTERS="); ok {
			masters = "--masters=" + v
		}
	}
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		out, _, _ := runWithEnv(t, env, "tasks", "list", masters)
		if !strings.Contains(out, "RUNNING") {
			return fmt.Errorf("no task running yet: %q", out)
		}
		return nil
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("allot run after Ctrl-C: %v, stderr %q; want exit 130", err, runErr.String())
	}
	testutil.WaitFor(t, 15*time.Second, 50*time.Millisecond, func() error {
		out, errOut, code := runWithEnv(t, env, "status", masters)
		if code != 0 || !strings.Contains(out, "frameworks  0: none") || !strings.Contains(out, "tasks       0: none") ||
			!strings.Contains(out, "offers      0 outstanding") {
			return fmt.Errorf("status after Ctrl-C: %q %q", out, errOut)
		}
		return nil
	})
}

// Bad settings are refused before anything reaches the cluster.
func TestRun_badFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--count", "0", "--nats", "nats://127.0.0.1:1", "--", "true"}, "--count 0"},
		{[]string{"run", "--mem", "lots", "--nats", "nats://127.0.0.1:1", "--", "true"}, `--mem "lots"`},
		{[]string{"run", "--cpus", "0", "--nats", "nats://127.0.0.1:1", "--", "true"}, "--cpus 0"},
		{[]string{"run", "--constraint", "rack", "--nats", "nats://127.0.0.1:1", "--", "true"}, "--constraint"},
		{[]string{"run", "--nats", ""}, "usage: allot run"},
	} {
		_, errOut, code := runWithEnv(t, nil, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("allot %s: exit %d, stderr %q; want 1 and %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
}
