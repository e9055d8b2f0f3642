package master

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// orderInbox keeps the UUIDs of the status updates a framework receives,
// in order, and its offers.
type orderInbox struct {
	offerInbox
	smu   sync.Mutex
	order []protocol.StatusUUID
}

func (b *orderInbox) receive(msg *nats.Msg) {
	if ev, ok := decodeEvent[protocol.StatusUpdateEvent](msg, protocol.MsgStatusUpdateEvent); ok {
		b.smu.Lock()
		b.order = append(b.order, ev.UUID)
		b.smu.Unlock()
		return
	}
	b.offerInbox.receive(msg)
}

func (b *orderInbox) received() []protocol.StatusUUID {
	b.smu.Lock()
	defer b.smu.Unlock()
	return slices.Clone(b.order)
}

// TestMaster_StatusQueue_orderAndAcks: two statuses an agent reports at
// once reach the framework one at a time, oldest first: the second only
// after the first is acknowledged, and the task leaves the master's state
// once the last is.
//
// Mutants this catches: Task.Pending giving the latest status instead of
// the oldest unacknowledged one (u-finished arrives first); an
// acknowledgement that does not drop the statuses it covers (u-finished
// never arrives); the leader not sending the next pending status after an
// acknowledgement (u-finished never arrives); the task kept after its
// final acknowledgement.
func TestMaster_StatusQueue_orderAndAcks(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, func(c *Config) { c.StatusRetryInterval = time.Hour })
	agent := registerTestAgent(t, nc)
	inbox := &orderInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	launchOnFirstOffer(t, nc, fw.FrameworkID, &inbox.offerInbox, agent.AgentID, "t1")
	status := func(uuid protocol.StatusUUID, st protocol.TaskState) protocol.StatusUpdate {
		return protocol.StatusUpdate{UUID: uuid, Status: protocol.TaskStatus{
			TaskID: "t1", FrameworkID: fw.FrameworkID, AgentID: agent.AgentID, State: st, UUID: uuid}}
	}
	httpTestRequest(t, nc, viaBody, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{
		AgentID: agent.AgentID, Updates: []protocol.StatusUpdate{status("u-running", protocol.TaskRunning),
			status("u-finished", protocol.TaskFinished)},
	}, nil)
	waitFor := func(want ...protocol.StatusUUID) {
		t.Helper()
		testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
			got := slices.Compact(inbox.received())
			if !slices.Equal(got, want) {
				return fmt.Errorf("received %v, want %v", got, want)
			}
			return nil
		})
	}
	waitFor("u-running")
	ack := func(uuid protocol.StatusUUID) {
		t.Helper()
		httpTestRequest(t, nc, viaBody, protocol.MsgAcknowledgeRequest,
			protocol.AcknowledgeRequest{FrameworkID: fw.FrameworkID, Acks: []protocol.Acknowledgement{{
				AgentID: agent.AgentID, TaskID: "t1", UUID: uuid}}}, nil)
	}
	if task, ok := m.View().Task(fw.FrameworkID, "t1"); !ok || task.State != protocol.TaskFinished || len(task.Unacked) != 1 {
		t.Fatalf("task after both updates: %+v, want FINISHED with u-running still unacknowledged", task)
	}
	ack("u-running")
	waitFor("u-running", "u-finished")
	if task, ok := m.View().Task(fw.FrameworkID, "t1"); !ok || len(task.Unacked) != 0 || task.Acked {
		t.Fatalf("task after the first acknowledgement: %+v, want only u-finished pending", task)
	}
	ack("u-finished")
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if _, ok := m.View().Task(fw.FrameworkID, "t1"); ok {
			return fmt.Errorf("the master still holds t1 after its final status was acknowledged")
		}
		return nil
	})
	if got := slices.Compact(inbox.received()); !slices.Equal(got, []protocol.StatusUUID{"u-running", "u-finished"}) {
		t.Errorf("received %v, want u-running then u-finished", got)
	}
}
