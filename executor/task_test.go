package executor

import (
	"strings"
	"testing"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

func TestFinalStatus(t *testing.T) {
	t.Parallel()
	code := func(n int) *int { return &n }
	tests := []struct {
		name     string
		task     task
		exit     runner.Exit
		state    protocol.TaskState
		reason   string
		inMsg    string
		exitCode *int
	}{
		{"exit 0", task{}, runner.Exit{Code: code(0)}, protocol.TaskFinished, "", "", code(0)},
		{"exit 3", task{}, runner.Exit{Code: code(3), Message: "boom"}, protocol.TaskFailed, protocol.ReasonCommandFailed, "exited with status 3: boom", code(3)},
		{"signal", task{}, runner.Exit{Signal: "SIGSEGV"}, protocol.TaskFailed, protocol.ReasonCommandFailed, "killed by SIGSEGV", nil},
		{"memory", task{}, runner.Exit{Signal: "SIGKILL", Reason: protocol.ReasonMemoryLimit, Message: "memory 70 MiB over limit 64 MiB"},
			protocol.TaskFailed, protocol.ReasonMemoryLimit, "over limit", nil},
		{"shim died", task{rec: taskRecord{KillRequested: true}}, runner.Exit{Reason: protocol.ReasonExecutorTerminated},
			protocol.TaskFailed, protocol.ReasonExecutorTerminated, "", nil},
		{"killed", task{rec: taskRecord{KillRequested: true, KillReason: protocol.ReasonKilledByFramework}},
			runner.Exit{Signal: "SIGTERM", Reason: protocol.ReasonKilledByFramework}, protocol.TaskKilled, protocol.ReasonKilledByFramework, "SIGTERM", nil},
		{"killed, exited 0 on TERM", task{rec: taskRecord{KillRequested: true, KillReason: protocol.ReasonFrameworkRemoved}},
			runner.Exit{Code: code(0)}, protocol.TaskKilled, protocol.ReasonFrameworkRemoved, "status 0", code(0)},
		{"group member", task{groupFailed: true}, runner.Exit{Signal: "SIGTERM", Reason: protocol.ReasonKilledByFramework},
			protocol.TaskFailed, protocol.ReasonGroupMemberFailed, "group", nil},
		{"killed without a request", task{}, runner.Exit{Signal: "SIGTERM", Reason: protocol.ReasonKilledByFramework},
			protocol.TaskDropped, protocol.ReasonAgentRestarted, "launch", nil},
		{"group launch cut", task{launchCut: true}, runner.Exit{Signal: "SIGTERM", Reason: protocol.ReasonKilledByFramework},
			protocol.TaskDropped, protocol.ReasonAgentRestarted, "group", nil},
		{"group launch cut, kill asked", task{launchCut: true, rec: taskRecord{KillRequested: true}},
			runner.Exit{Signal: "SIGTERM", Reason: protocol.ReasonKilledByFramework}, protocol.TaskKilled, protocol.ReasonKilledByFramework, "SIGTERM", nil},
		{"never started", task{}, runner.Exit{Reason: protocol.ReasonCommandFailed, Message: "not found"},
			protocol.TaskFailed, protocol.ReasonCommandFailed, "not found", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, reason, msg, ec := finalStatus(&tc.task, tc.exit)
			if st != tc.state || reason != tc.reason || !strings.Contains(msg, tc.inMsg) {
				t.Fatalf("got %s %q %q, want %s %q with %q", st, reason, msg, tc.state, tc.reason, tc.inMsg)
			}
			if (ec == nil) != (tc.exitCode == nil) || ec != nil && *ec != *tc.exitCode {
				t.Fatalf("exit code %v, want %v", ec, tc.exitCode)
			}
		})
	}
}

func TestSandboxName(t *testing.T) {
	t.Parallel()
	free := func(string) bool { return false }
	if got := sandboxName("fw-1", "task.a", free); got != "fw-1_task.a" {
		t.Fatalf("got %q", got)
	}
	if got := sandboxName(".fw", "t", free); got != "t.fw_t" {
		t.Fatalf("leading dot: got %q", got)
	}
	long := sandboxName(protocol.FrameworkID(strings.Repeat("f", 128)), protocol.TaskID(strings.Repeat("t", 128)), free)
	if len(long) > runner.MaxNameLen || long == sandboxName(protocol.FrameworkID(strings.Repeat("f", 128)), protocol.TaskID(strings.Repeat("t", 127)+"u"), free) {
		t.Fatalf("long ids: %q (%d bytes) is too long or not distinct", long, len(long))
	}
	taken := sandboxName("fw", "t", func(n string) bool { return n == "fw_t" })
	if !strings.HasPrefix(taken, "fw_t_") || len(taken) > runner.MaxNameLen {
		t.Fatalf("taken name: got %q", taken)
	}
}

func TestPortList(t *testing.T) {
	t.Parallel()
	got := portList(protocol.Ranges{{Begin: 31005, End: 31006}, {Begin: 31000, End: 31000}})
	if strings.Join(got, ",") != "31000,31005,31006" {
		t.Fatalf("got %v", got)
	}
	if n := len(portList(protocol.Ranges{{Begin: 0, End: 1 << 20}})); n != maxPortVars {
		t.Fatalf("got %d ports, want the cap %d", n, maxPortVars)
	}
	if n := len(portList(protocol.Ranges{{Begin: ^uint64(0), End: ^uint64(0)}})); n != 1 {
		t.Fatalf("largest port: got %d, want 1", n)
	}
}
