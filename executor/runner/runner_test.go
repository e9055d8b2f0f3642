//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestRunner_Start_CapturesStdout(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	task := start(t, r, shellSpec("echo", "echo hello; echo warn >&2"))
	if task.Pid() <= 0 {
		t.Fatalf("got pid %d", task.Pid())
	}
	e := wait(t, task)
	if code(e) != 0 || e.Reason != "" || e.Signal != "" || e.Message != "" {
		t.Fatalf("got %+v, want a clean exit 0", e)
	}
	if e.EndedAt.IsZero() {
		t.Fatal("EndedAt is zero")
	}
	for file, want := range map[string]string{stdoutFile: "hello\n", stderrFile: "warn\n"} {
		got, err := os.ReadFile(filepath.Join(task.Sandbox(), file))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q (%v), want %q", file, got, err, want)
		}
	}
	if got, want := task.Sandbox(), filepath.Join(r.workDir, "echo"); got != want {
		t.Errorf("sandbox: got %s, want %s", got, want)
	}
}

func TestRunner_Start_Environment(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	s := shellSpec("env", `echo "$ALLOT_SANDBOX|$HOME|$PWD|$A|$B|$PATH|$`+envShim+`"`)
	s.Command.Env = map[string]string{"A": "from-command", "B": "from-command"}
	s.Env = map[string]string{"B": "from-agent"}
	task := start(t, r, s)
	if e := wait(t, task); code(e) != 0 {
		t.Fatalf("got %+v", e)
	}
	got, _ := os.ReadFile(filepath.Join(task.Sandbox(), stdoutFile))
	sb := task.Sandbox()
	want := sb + "|" + sb + "|" + sb + "|from-command|from-agent|" + defaultPath + "|\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRunner_Start_ArgsWithoutShell(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	s := Spec{TaskID: "t", Name: "args", Command: protocol.CommandInfo{Value: "echo", Args: []string{"a  b", "$HOME"}}}
	task := start(t, r, s)
	if e := wait(t, task); code(e) != 0 {
		t.Fatalf("got %+v", e)
	}
	if got, _ := os.ReadFile(filepath.Join(task.Sandbox(), stdoutFile)); string(got) != "a  b $HOME\n" {
		t.Fatalf("got %q", got)
	}
}

func TestRunner_Start_NonZeroExitCarriesStderrTail(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	// 3000 bytes of x before the last line: only the tail is kept.
	script := `i=0; while [ $i -lt 30 ]; do printf '%0100d' 0 | tr 0 x >&2; i=$((i+1)); done; echo >&2; echo "it broke" >&2; exit 3`
	task := start(t, r, shellSpec("fail", script))
	e := wait(t, task)
	if code(e) != 3 || e.Reason != "" {
		t.Fatalf("got %+v, want code 3 and no reason", e)
	}
	if !strings.HasSuffix(e.Message, "it broke") || len(e.Message) > tailSize {
		t.Fatalf("message %q (%d bytes): want the stderr tail, at most %d bytes", e.Message, len(e.Message), tailSize)
	}
}

func TestRunner_Start_SignalledExit(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	e := wait(t, start(t, r, shellSpec("segv", "kill -SEGV $$")))
	if e.Code != nil || e.Signal != "SIGSEGV" || e.Reason != "" || e.Message != "killed by SIGSEGV" {
		t.Fatalf("got %+v, want killed by SIGSEGV", e)
	}
}

func TestRunner_Start_CommandNotStarted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, value, want string
	}{
		{"not-in-path", "no-such-command-allot", "not found"},
		{"not-in-sandbox", "./missing", "not found"},
		{"not-executable", "./data", "not executable"},
		{"directory", "/", "directory"},
	}
	r := newRunner(t, "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := Spec{TaskID: "t", Name: tc.name, Command: protocol.CommandInfo{Value: tc.value}}
			sandbox, err := r.Prepare(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sandbox, "data"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			task, err := r.Start(context.Background(), s)
			if !errors.Is(err, ErrStart) || task != nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want ErrStart mentioning %q", task, err, tc.want)
			}
			if got := Reason(err); got != protocol.ReasonCommandFailed {
				t.Fatalf("Reason: got %q", got)
			}
			// The failure is recorded for a later agent.
			again, err := r.Reattach(context.Background(), tc.name)
			if err != nil {
				t.Fatal(err)
			}
			e := wait(t, again)
			if e.Reason != protocol.ReasonCommandFailed || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("reattached: got %+v", e)
			}
		})
	}
}

func TestRunner_Start_RefusesSecondStart(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	s := shellSpec("once", "exit 0")
	wait(t, start(t, r, s))
	if _, err := r.Start(context.Background(), s); !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("second start: got %v, want ErrInvalidSpec", err)
	}
	if _, err := r.Prepare(context.Background(), s); !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("prepare after start: got %v, want ErrInvalidSpec", err)
	}
}

func TestRunner_Start_CancelledContext(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Start(ctx, shellSpec("cancelled", "sleep 60")); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if _, err := r.Reattach(context.Background(), "cancelled"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("reattach: got %v, want ErrNotFound", err)
	}
}

func TestRunner_Start_FromSandboxWithOpenFilesLimit(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	src := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(src, []byte("#!/bin/sh\nulimit -n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Spec{TaskID: "t", Name: "script", Limits: Limits{OpenFiles: 100}, Command: protocol.CommandInfo{
		Value: "bin/run.sh",
		URIs:  []protocol.URI{{Value: "file://" + src, OutputFile: "bin/run.sh", Executable: true}},
	}}
	if _, err := r.Prepare(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	task := start(t, r, s)
	if e := wait(t, task); code(e) != 0 {
		t.Fatalf("got %+v", e)
	}
	if got, _ := os.ReadFile(filepath.Join(task.Sandbox(), stdoutFile)); string(got) != "100\n" {
		t.Fatalf("ulimit -n: got %q, want 100", got)
	}
}
