package main

import (
	"bufio"
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDev_Help(t *testing.T) {
	t.Parallel()
	out, errOut, code := runAllot(t, "", "dev", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, flag := range []string{"--data-dir", "--masters", "--agents", "--agent-resources", "--nats-port", "--http-port", "--raft-port", "--log-level"} {
		if !strings.Contains(out, flag) {
			t.Errorf("help does not mention %s", flag)
		}
	}
}

func TestDev_BadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two masters", []string{"--masters", "2"}, "2 masters: want 1 or 3"},
		{"no agents", []string{"--agents", "0"}, "0 agents"},
		{"bad resources", []string{"--agent-resources", "cpus=lots"}, "--agent-resources"},
		{"bad log level", []string{"--log-level", "loud"}, "--log-level"},
		{"negative port", []string{"--nats-port", "-5"}, "nats port"},
		{"unknown flag", []string{"--bogus"}, "unknown flag"},
		{"arguments", []string{"extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"dev", "--data-dir", t.TempDir()}, tc.args...)
			_, errOut, code := runAllot(t, "", args...)
			if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("got exit %d, stderr %q, want 1 and one line with %q", code, errOut, tc.want)
			}
		})
	}
}

// TestDev_RunAndInterrupt runs `allot dev` on free ports, waits for its
// instructions, and stops it with SIGINT: it must exit 0; a second start
// on the same data dir resumes, and refuses a different master count.
func TestDev_RunAndInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"dev", "--data-dir", dir, "--masters", "1", "--agents", "1", "--agent-resources", "cpus=500,mem=256",
		"--nats-port", "0", "--http-port", "0", "--raft-port", "0", "--isolation", "portable"}
	for i, want := range []string{"started a new cluster", "resumed the cluster"} {
		out := runDevUntilReady(t, args)
		if !strings.Contains(out, want) || !strings.Contains(out, "export ALLOT_SECRET=secret-") ||
			!strings.Contains(out, "export ALLOT_NATS=nats://127.0.0.1:") || !strings.Contains(out, dir) {
			t.Fatalf("run %d: got output\n%s\nwant %q, the data dir, NATS URL and credentials", i, out, want)
		}
	}
	_, errOut, code := runAllot(t, "", "dev", "--data-dir", dir, "--masters", "3")
	if code != 1 || !strings.Contains(errOut, "already holds a cluster with 1 master") {
		t.Errorf("got exit %d, stderr %q, want a refusal to change the master count", code, errOut)
	}
}

// runDevUntilReady starts allot with args, waits until it printed its
// instructions, interrupts it and checks it exits 0. It returns stdout.
func runDevUntilReady(t *testing.T, args []string) string {
	t.Helper()
	cmd := allotCommand(nil, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var out strings.Builder
	deadline := time.After(30 * time.Second)
	for ready := false; !ready; {
		select {
		case line, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatalf("allot dev exited early:\n%s\nstderr:\n%s", out.String(), errb.String())
			}
			out.WriteString(line + "\n")
			ready = strings.Contains(line, "resumes it")
		case <-deadline:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("allot dev printed no instructions in 30s:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for line := range lines {
		out.WriteString(line + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("allot dev after SIGINT: %v\nstderr:\n%s", err, errb.String())
	}
	return out.String()
}
