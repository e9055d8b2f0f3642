//go:build linux

package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// launchGroup accepts an offer of agent id with a launch_group operation.
func launchGroup(t *testing.T, c *testcluster.Cluster, f *testcluster.TestFramework, id protocol.AgentID, group string, tasks ...protocol.TaskInfo) {
	t.Helper()
	for i := range tasks {
		tasks[i].AgentID = id
	}
	nc := c.Connect("group")
	retryOffers(t, func() error {
		offer := offerOn(t, f, id, tasks...)
		usedOffers.Store(offer.ID, true)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		accept := protocol.AcceptRequest{FrameworkID: f.ID(), OfferIDs: []protocol.OfferID{offer.ID},
			Operations: []protocol.Operation{{Type: protocol.OperationLaunchGroup, GroupID: group, Tasks: tasks}}}
		subject, err := c.Subjects().RequestSubject("", accept)
		if err != nil {
			return err
		}
		return testcluster.Request(ctx, nc, time.Second, subject, protocol.MsgAcceptRequest, accept, nil)
	})
}

func TestAgent_HardConstraint(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	hard := shellTask("hard", "true")
	hard.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r9"}}
	soft := shellTask("soft", "true")
	soft.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r9", Soft: true}}
	launch(t, f, a.ID(), hard, soft)

	st := waitState(t, f, "hard", protocol.TaskError)
	if st.Reason != protocol.ReasonConstraintViolated || !strings.Contains(st.Message, "rack") {
		t.Fatalf("got %+v, want constraint_violated naming rack", st)
	}
	if got := uniqueStates(f.Statuses("hard")); !equalStates(got, []protocol.TaskState{protocol.TaskError}) {
		t.Fatalf("got %v, want only ERROR", got)
	}
	waitState(t, f, "soft", protocol.TaskFinished)
}

func TestAgent_Group(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})

	t.Run("constraint refuses the whole group", func(t *testing.T) {
		bad := shellTask("c-bad", "touch ran")
		bad.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r8", "r9"}}}
		launchGroup(t, c, f, a.ID(), "g-constraint", shellTask("c-ok", "touch ran"), bad)
		st := waitState(t, f, "c-bad", protocol.TaskError)
		if st.Reason != protocol.ReasonConstraintViolated {
			t.Fatalf("culprit: got %+v, want constraint_violated", st)
		}
		st = waitState(t, f, "c-ok", protocol.TaskError)
		if st.Reason != protocol.ReasonGroupMemberFailed || !strings.Contains(st.Message, "c-bad") {
			t.Fatalf("innocent: got %+v, want group_member_failed naming c-bad", st)
		}
		for _, id := range []string{"c-ok", "c-bad"} {
			if got := uniqueStates(f.Statuses(protocol.TaskID(id))); len(got) != 1 {
				t.Errorf("%s: got %v, want only ERROR", id, got)
			}
			if _, err := os.Stat(filepath.Join(a.SandboxRoot(), string(f.ID())+"_"+id)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s has a sandbox (%v): nothing of the group may run", id, err)
			}
		}
	})

	t.Run("a start failure stops the started members", func(t *testing.T) {
		missing := shellTask("s-bad", "")
		missing.Command = protocol.CommandInfo{Value: "/nonexistent/command"}
		launchGroup(t, c, f, a.ID(), "g-start", shellTask("s-ok", "exec sleep 60"), missing)
		st := waitState(t, f, "s-bad", protocol.TaskFailed)
		if st.Reason != protocol.ReasonCommandFailed {
			t.Fatalf("culprit: got %+v, want command_failed", st)
		}
		st = waitState(t, f, "s-ok", protocol.TaskFailed)
		if st.Reason != protocol.ReasonGroupMemberFailed {
			t.Fatalf("innocent: got %+v, want group_member_failed", st)
		}
		if slices.Contains(uniqueStates(f.Statuses("s-ok")), protocol.TaskRunning) {
			t.Fatalf("innocent was reported RUNNING: %v", uniqueStates(f.Statuses("s-ok")))
		}
	})

	t.Run("a good group runs", func(t *testing.T) {
		launchGroup(t, c, f, a.ID(), "g-good", shellTask("g1", "echo one"), shellTask("g2", "echo two"))
		for _, id := range []string{"g1", "g2"} {
			waitState(t, f, id, protocol.TaskFinished)
			want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished}
			if got := uniqueStates(f.Statuses(protocol.TaskID(id))); !equalStates(got, want) {
				t.Errorf("%s: got %v, want %v", id, got, want)
			}
		}
	})
}

func TestAgent_Fetch(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	src := filepath.Join(t.TempDir(), "input.txt")
	if err := os.WriteFile(src, []byte("payload\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("payload\n"))
	withURI := func(id, script string, u protocol.URI) protocol.TaskInfo {
		ti := shellTask(id, script)
		u.Value = "file://" + src
		ti.Command.URIs = []protocol.URI{u}
		return ti
	}
	good := withURI("good", "cat data/in.txt", protocol.URI{Sha256: hex.EncodeToString(sum[:]), OutputFile: "data/in.txt"})
	badSum := withURI("bad-sum", "true", protocol.URI{Sha256: strings.Repeat("0", 64)})
	reserved := withURI("reserved", "true", protocol.URI{OutputFile: ".allot/x"})
	launch(t, f, a.ID(), good, badSum, reserved)

	waitState(t, f, "good", protocol.TaskFinished)
	if _, body := readFile(t, a, sandboxOf(t, a, f.ID(), "good")+"/stdout", a.FilesToken()); body != "payload\n" {
		t.Fatalf("fetched file: got %q", body)
	}
	st := waitState(t, f, "bad-sum", protocol.TaskFailed)
	if st.Reason != protocol.ReasonFetchFailed || !strings.Contains(st.Message, "sha256") {
		t.Fatalf("bad checksum: got %+v, want fetch_failed about sha256", st)
	}
	st = waitState(t, f, "reserved", protocol.TaskFailed)
	if st.Reason != protocol.ReasonFetchFailed || !strings.Contains(st.Message, ".allot") {
		t.Fatalf("reserved output: got %+v, want fetch_failed naming .allot", st)
	}

	// An output path with ".." never reaches the agent through the master,
	// which validates every task; the agent refuses it as well.
	escape := withURI("escape", "true", protocol.URI{OutputFile: "../x"})
	if err := f.Launch(offerOn(t, f, a.ID(), escape), escape); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("accept with ../x: got %v, want ErrInvalidArgument", err)
	}
	escape.TaskID, escape.AgentID = "escape-direct", a.ID()
	publish(t, c.Connect("test"), c, a.ID(), protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: f.ID(), Tasks: []protocol.TaskInfo{escape}})
	ts := waitAgentTask(t, a.Agent, f.ID(), "escape-direct", protocol.TaskError)
	if ts.Reason != protocol.ReasonTaskInvalid || !strings.Contains(ts.Message, "escapes the sandbox") {
		t.Fatalf("direct launch with ../x: got %+v, want task_invalid, escapes the sandbox", ts)
	}
	if _, err := os.Stat(filepath.Join(a.SandboxRoot(), "x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file escaped the sandbox: %v", err)
	}
}
