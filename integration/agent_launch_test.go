package integration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/protocol"
)

// distinctStates returns the states of a task's status updates in arrival
// order, each update (UUID) once; statuses without a UUID are left out.
func distinctStates(sts []sdktest.Arrival) []protocol.TaskState {
	seen := map[protocol.StatusUUID]bool{}
	var out []protocol.TaskState
	for _, st := range sts {
		if st.UUID != "" && !seen[st.UUID] {
			seen[st.UUID] = true
			out = append(out, st.State)
		}
	}
	return out
}

// TestAgent_ShellTasks launches shell commands through the SDK on a real
// agent: exit codes, output, kills (escalating past a TERM trap) and the
// memory limit come back to the framework as typed statuses.
func TestAgent_ShellTasks(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	e := executors.New(t, c, executors.Options{})
	f := startSDK(t, c, framework.WithName("shell"))
	term := raftTerm(c)

	hello := shTask("hello", "echo hello; exit 0")
	three := shTask("three", "exit 3")
	long := shTask("long", "sleep 1000")
	stubborn := shTask("stubborn", `trap '' TERM; touch ready; while true; do sleep 0.1; done`)
	stubborn.KillGracePeriod = 500 * time.Millisecond
	// A kill's own grace period replaces the task's hour.
	patient := shTask("patient", `trap '' TERM; touch ready; while true; do sleep 0.1; done`)
	patient.KillGracePeriod = time.Hour
	// tail holds its whole input until it sees a line end, which never
	// comes: its memory grows far past the task's 32 MiB.
	hog := shTask("hog", `(head -c 200000000 /dev/zero; exec sleep 60) | tail`)
	f.launch(t, e.ID(), hello, three, long, stubborn, patient, hog)

	t.Run("exit 0", func(t *testing.T) {
		st := f.rec.WaitUpdate(t, "hello", protocol.TaskFinished)
		if st.ExitCode == nil || *st.ExitCode != 0 {
			t.Errorf("exit code %v, want 0", st.ExitCode)
		}
		// Every update, in order, even across leader changes: the leader
		// sends a task's next update only once the one before is
		// acknowledged, and the queue is replicated. Reconciliation
		// statuses (no UUID) may come in between.
		want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished}
		if got := distinctStates(f.rec.Statuses("hello")); !slices.Equal(got, want) {
			t.Errorf("updates %v, want %v (raft term %s, started at %s)", got, want, raftTerm(c), term)
		}
		if out := readSandbox(t, e, sandboxOf(t, e, f.d.ID(), "hello"), "stdout"); out != "hello\n" {
			t.Errorf("stdout %q, want %q", out, "hello\n")
		}
	})
	t.Run("exit 3", func(t *testing.T) {
		st := f.rec.WaitUpdate(t, "three", protocol.TaskFailed)
		if st.ExitCode == nil || *st.ExitCode != 3 || st.Reason != protocol.ReasonCommandFailed {
			t.Errorf("got %s exit %v, want FAILED command_failed exit 3", sdktest.DescribeStatuses([]sdktest.Arrival{st}), st.ExitCode)
		}
	})
	t.Run("kill", func(t *testing.T) {
		f.rec.WaitState(t, "long", protocol.TaskRunning)
		if err := f.d.Kill(sdkCtx(t), "long", "", 0); err != nil {
			t.Fatal(err)
		}
		st := f.rec.WaitUpdate(t, "long", protocol.TaskKilled)
		if st.Reason != protocol.ReasonKilledByFramework {
			t.Errorf("reason %q, want %s", st.Reason, protocol.ReasonKilledByFramework)
		}
	})
	t.Run("kill escalates after the grace", func(t *testing.T) {
		f.rec.WaitState(t, "stubborn", protocol.TaskRunning)
		waitFile(t, sandboxFile(e, sandboxOf(t, e, f.d.ID(), "stubborn"), "ready"))
		asked := time.Now()
		if err := f.d.Kill(sdkCtx(t), "stubborn", "", 0); err != nil {
			t.Fatal(err)
		}
		st := f.rec.WaitUpdate(t, "stubborn", protocol.TaskKilled)
		if took := st.At.Sub(asked); took < stubborn.KillGracePeriod {
			t.Errorf("KILLED %s after the kill, before the %s grace ran out", took, stubborn.KillGracePeriod)
		}
		if st.Reason != protocol.ReasonKilledByFramework || !strings.Contains(st.Message, "SIGKILL") {
			t.Errorf("got %s %q, want killed_by_framework by SIGKILL", st.Reason, st.Message)
		}
		if got := distinctStates(f.rec.Statuses("stubborn")); !slices.Contains(got, protocol.TaskKilling) {
			t.Errorf("updates %v, want KILLING before KILLED", got)
		}
	})
	t.Run("kill with its own grace", func(t *testing.T) {
		f.rec.WaitState(t, "patient", protocol.TaskRunning)
		waitFile(t, sandboxFile(e, sandboxOf(t, e, f.d.ID(), "patient"), "ready"))
		const grace = 300 * time.Millisecond
		asked := time.Now()
		if err := f.d.Kill(sdkCtx(t), "patient", "", grace); err != nil {
			t.Fatal(err)
		}
		st := f.rec.WaitUpdate(t, "patient", protocol.TaskKilled)
		if took := st.At.Sub(asked); took < grace {
			t.Errorf("KILLED %s after the kill, before its %s grace ran out", took, grace)
		}
		if !strings.Contains(st.Message, grace.String()) {
			t.Errorf("message %q, want SIGKILL after the kill's %s grace", st.Message, grace)
		}
	})
	t.Run("memory limit", func(t *testing.T) {
		st := f.rec.WaitUpdate(t, "hog", protocol.TaskFailed)
		if st.Reason != protocol.ReasonMemoryLimit || !strings.Contains(st.Message, "32 MiB") {
			t.Errorf("got %s %q, want memory_limit over 32 MiB", st.Reason, st.Message)
		}
	})
}

// TestAgent_GroupRefusedWhole launches a task group one of whose members
// violates a hard constraint. The master does not evaluate task
// constraints, so the group reaches the agent, which refuses it whole:
// no member gets a sandbox or runs, and each ends ERROR with its reason.
func TestAgent_GroupRefusedWhole(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	e := executors.New(t, c, executors.Options{Attributes: protocol.Attributes{"rack": protocol.Text("r1")}})
	f := startSDK(t, c, framework.WithName("group"))
	fw := f.d.ID()

	ok := shTask("ok", "touch ran; sleep 1000")
	bad := shTask("bad", "touch ran")
	bad.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r9"}}
	f.launchGroup(t, e.ID(), "pair", ok, bad)

	st := f.rec.WaitUpdate(t, "bad", protocol.TaskError)
	if st.Reason != protocol.ReasonConstraintViolated || !strings.Contains(st.Message, "rack") {
		t.Errorf("culprit: got %s %q, want constraint_violated naming rack", st.Reason, st.Message)
	}
	st = f.rec.WaitUpdate(t, "ok", protocol.TaskError)
	if st.Reason != protocol.ReasonGroupMemberFailed || !strings.Contains(st.Message, "bad") {
		t.Errorf("other member: got %s %q, want group_member_failed naming bad", st.Reason, st.Message)
	}
	for _, id := range []protocol.TaskID{"ok", "bad"} {
		sts := f.rec.Statuses(id)
		// The agent decided, and reported nothing but ERROR.
		if got := distinctStates(sts); !slices.Equal(got, []protocol.TaskState{protocol.TaskError}) {
			t.Errorf("%s: updates %v (%s), want one ERROR", id, got, sdktest.DescribeStatuses(sts))
		}
		ts := waitAgentTask(t, e, fw, id, protocol.TaskError)
		if ts.Sandbox != "" {
			t.Errorf("%s: the agent gave it sandbox %q", id, ts.Sandbox)
		}
		if _, err := os.Stat(filepath.Join(e.Agent().SandboxRoot(), string(fw)+"_"+string(id))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s has a sandbox directory (%v)", id, err)
		}
	}
	if ran, _ := filepath.Glob(filepath.Join(e.Agent().SandboxRoot(), "*", "ran")); len(ran) > 0 {
		t.Errorf("a member ran: %v", ran)
	}
	if used := e.Agent().State().Used; !used.IsEmpty() {
		t.Errorf("the agent still counts %s used", used)
	}
}

// TestAgent_GroupThatCannotFit launches a task group whose members fit one
// by one but not together: the leader refuses the accept whole, every
// member ends TASK_ERROR, and none reaches the agent; the offer stays
// usable for a group that fits.
func TestAgent_GroupThatCannotFit(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	e := executors.New(t, c, executors.Options{})
	f := startSDK(t, c, framework.WithName("too-big"))
	fw := f.d.ID()
	o := f.offerOn(t, e.ID(), shTask("probe", "true").Resources)
	half := o.Resources.Scalar(protocol.ResCPUs)/2 + 100
	var members []protocol.TaskInfo
	for i := range 2 {
		m := framework.NewTask(protocol.TaskID(fmt.Sprint("m", i)), "touch ran; sleep 1000").Shell().CPUs(half).Mem(32).Build()
		members = append(members, m)
	}
	err := f.d.LaunchGroup(sdkCtx(t), []protocol.OfferID{o.ID}, "big", members...)
	if !errors.Is(err, protocol.ErrInsufficient) {
		t.Fatalf("LaunchGroup: %v, want ErrInsufficient", err)
	}
	for _, m := range members {
		st := f.rec.WaitState(t, m.TaskID, protocol.TaskError)
		if st.Reason != protocol.ReasonTaskInvalid || st.UUID != "" {
			t.Errorf("%s: got %s %q, want task_invalid from the leader", m.TaskID, st.Reason, st.Message)
		}
		if _, ok := c.WaitForLeader().View().Task(fw, m.TaskID); ok {
			t.Errorf("the leader holds %s", m.TaskID)
		}
		if _, ok := agentTask(e, fw, m.TaskID); ok {
			t.Errorf("the agent knows %s", m.TaskID)
		}
	}
	// The refused accept changed nothing: a group that fits runs.
	small := []protocol.TaskInfo{shTask("s0", "sleep 1000"), shTask("s1", "sleep 1000")}
	f.launchGroup(t, e.ID(), "small", small...)
	for _, m := range small {
		f.rec.WaitState(t, m.TaskID, protocol.TaskRunning)
	}
}
