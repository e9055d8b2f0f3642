package master

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestMaster_NewLeaderResendsFrameworkShutdowns: a removed framework's
// agents are told to shut it down when it is removed and again by every
// new leader, which may be the only one to tell them (the one that
// committed the removal may have lost leadership before sending).
func TestMaster_NewLeaderResendsFrameworkShutdowns(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	agent := registerTestAgent(t, nc)
	shutdowns := countShutdowns(t, nc, agent.AgentID)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	launchOnFirstOffer(t, nc, fw.FrameworkID, inbox, agent.AgentID, "t1")
	httpTestRequest(t, nc, viaBody, protocol.MsgTeardownRequest,
		protocol.TeardownRequest{FrameworkID: fw.FrameworkID}, nil)
	shutdowns.wait(t, 1)
	m.rebuildLeader() // the leader services start over, as on a new leader
	shutdowns.wait(t, 2)
}

// TestMaster_TeardownTellsAgentsOfCompletedTasks: a removed framework's
// shutdown reaches the agents where only its completed tasks ran, so that
// they know nobody reads those tasks' sandboxes any more, and a new
// leader tells them again.
func TestMaster_TeardownTellsAgentsOfCompletedTasks(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	agent := registerTestAgent(t, nc)
	shutdowns := countShutdowns(t, nc, agent.AgentID)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	launchOnFirstOffer(t, nc, fw.FrameworkID, inbox, agent.AgentID, "t1")
	const uuid = protocol.StatusUUID("u-finished")
	httpTestRequest(t, nc, viaBody, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{
		AgentID: agent.AgentID, Updates: []protocol.StatusUpdate{{UUID: uuid, Status: protocol.TaskStatus{
			TaskID: "t1", FrameworkID: fw.FrameworkID, AgentID: agent.AgentID, State: protocol.TaskFinished, UUID: uuid}}},
	}, nil)
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		httpTestRequest(t, nc, viaBody, protocol.MsgAcknowledgeRequest, protocol.AcknowledgeRequest{FrameworkID: fw.FrameworkID,
			Acks: []protocol.Acknowledgement{{AgentID: agent.AgentID, TaskID: "t1", UUID: uuid}}}, nil)
		if _, ok := m.View().Task(fw.FrameworkID, "t1"); ok {
			return fmt.Errorf("t1 is not completed yet")
		}
		return nil
	})
	if n := len(m.View().CompletedTasks(fw.FrameworkID)); n != 1 {
		t.Fatalf("%d completed tasks, want t1", n)
	}
	httpTestRequest(t, nc, viaBody, protocol.MsgTeardownRequest, protocol.TeardownRequest{FrameworkID: fw.FrameworkID}, nil)
	shutdowns.wait(t, 1)
	m.rebuildLeader()
	shutdowns.wait(t, 2)
}

// shutdownCount counts the ShutdownFrameworkCommands an agent receives.
type shutdownCount struct{ n atomic.Int32 }

// countShutdowns listens on the agent's command subject for the test.
func countShutdowns(t *testing.T, nc *nats.Conn, agent protocol.AgentID) *shutdownCount {
	t.Helper()
	subject, err := protocol.Subjects{Prefix: "allot"}.AgentCmd("", agent)
	if err != nil {
		t.Fatal(err)
	}
	c := &shutdownCount{}
	sub, err := nc.Subscribe(subject, func(msg *nats.Msg) {
		if _, ok := decodeEvent[protocol.ShutdownFrameworkCommand](msg, protocol.MsgShutdownFrameworkCommand); ok {
			c.n.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return c
}

// wait waits until at least n commands have arrived.
func (c *shutdownCount) wait(t *testing.T, n int32) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if got := c.n.Load(); got < n {
			return fmt.Errorf("%d shutdown commands, want %d", got, n)
		}
		return nil
	})
}
