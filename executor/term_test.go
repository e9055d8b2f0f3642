package executor

import (
	"fmt"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestAgent_DropsCommandsOfOldTerms: once the agent has seen the leader of
// term 5 (an announcement), a launch stamped with term 4, or with no term,
// is dropped; one of term 5 runs. A leader deposed without noticing can no
// longer act on the agent.
func TestAgent_DropsCommandsOfOldTerms(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	m := newFakeMaster(t, c)
	cfg := testConfig(t, c, t.TempDir())
	cfg.SubjectPrefix = "fake"
	a := startAgent(t, cfg)
	ann, err := protocol.Encode(protocol.MsgLeaderAnnouncement, protocol.LeaderAnnouncement{ID: "m5", Term: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.nc.Publish(m.subj.Leader(), ann); err != nil {
		t.Fatal(err)
	}
	testutilWaitFor(t, func() error {
		a.Agent.mu.Lock()
		defer a.Agent.mu.Unlock()
		if a.Agent.term != 5 {
			return fmt.Errorf("agent at term %d, want 5", a.Agent.term)
		}
		return nil
	})
	launch := func(id protocol.TaskID, term string) {
		task := shellTask(string(id), "true")
		task.AgentID = a.ID()
		data, err := protocol.Encode(protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: "fw-fake",
			Tasks: []protocol.TaskInfo{task}})
		if err != nil {
			t.Fatal(err)
		}
		m.commandOfTerm(t, a.ID(), data, term)
	}
	launch("old-term", "4")
	launch("no-term", "")
	launch("garbled-term", "5x")
	launch("current", "5")
	waitAgentTask(t, a.Agent, "fw-fake", "current", protocol.TaskFinished)
	// Commands are handled in order: those before the current one were
	// handled, and dropped.
	for _, id := range []protocol.TaskID{"old-term", "no-term", "garbled-term"} {
		if got := m.states(id); len(got) != 0 {
			t.Errorf("task %s of a dropped command reported %v", id, got)
		}
		for _, ts := range a.Agent.State().Tasks {
			if ts.TaskID == id {
				t.Errorf("the agent has task %s of a dropped command", id)
			}
		}
	}
}
