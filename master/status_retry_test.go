package master

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// statusInbox counts the status update events a framework receives, by
// UUID, and keeps its offers.
type statusInbox struct {
	offerInbox
	smu sync.Mutex
	got map[protocol.StatusUUID]int
}

func (b *statusInbox) receive(msg *nats.Msg) {
	if ev, ok := decodeEvent[protocol.StatusUpdateEvent](msg, protocol.MsgStatusUpdateEvent); ok {
		b.smu.Lock()
		b.got[ev.UUID]++
		b.smu.Unlock()
		return
	}
	b.offerInbox.receive(msg)
}

// waitCount waits until uuid has arrived n times.
func (b *statusInbox) waitCount(t *testing.T, uuid protocol.StatusUUID, n int) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		b.smu.Lock()
		defer b.smu.Unlock()
		if b.got[uuid] < n {
			return fmt.Errorf("status %s arrived %d times, want %d", uuid, b.got[uuid], n)
		}
		return nil
	})
}

// retryTestTask starts a master whose status retry interval is first, and
// launches task t1 of a framework that records its statuses on an agent.
func retryTestTask(t *testing.T, first time.Duration) (*Master, *nats.Conn, protocol.RegisterReply, protocol.SubscribeReply, *statusInbox) {
	t.Helper()
	m, nc := apiTestMaster(t, func(c *Config) { c.StatusRetryInterval = first })
	agent := registerTestAgent(t, nc)
	inbox := &statusInbox{got: map[protocol.StatusUUID]int{}}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true, FailoverTimeout: time.Hour}, inbox.receive)
	launchOnFirstOffer(t, nc, fw.FrameworkID, &inbox.offerInbox, agent.AgentID, "t1")
	return m, nc, agent, fw, inbox
}

// TestMaster_StatusRetries: a status the framework does not acknowledge is
// sent again after the retry interval, then after doubling waits capped at
// ten minutes; a newer status waits until it is acknowledged, then starts
// over; an acknowledged one is not sent again. The scans run by hand at chosen times (the interval is long
// enough that the leader's own scan never runs during the test).
func TestMaster_StatusRetries(t *testing.T) {
	t.Parallel()
	const first = 3 * time.Minute
	m, nc, agent, fw, inbox := retryTestTask(t, first)
	update := func(uuid protocol.StatusUUID, st protocol.TaskState) {
		t.Helper()
		httpTestRequest(t, nc, viaBody, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{
			AgentID: agent.AgentID, Updates: []protocol.StatusUpdate{{UUID: uuid, Status: protocol.TaskStatus{
				TaskID: "t1", FrameworkID: fw.FrameworkID, AgentID: agent.AgentID, State: st, UUID: uuid}}},
		}, nil)
	}
	update("u-running", protocol.TaskRunning)
	inbox.waitCount(t, "u-running", 1)

	l := leaderOf(t, m)
	t0 := time.Now()
	scan := func(at time.Duration, want int) {
		t.Helper()
		if got := l.retryStatuses(t0.Add(at)); got != want {
			t.Fatalf("scan at +%s resent %d statuses, want %d", at, got, want)
		}
	}
	scan(0, 0)                        // seen unacknowledged: due a whole interval later
	scan(first-1, 0)                  // not yet
	scan(first, 1)                    // 3m: the first resend
	scan(3*first-1, 0)                // the next waits twice as long (6m)
	scan(3*first, 1)                  // 9m
	scan(3*first+10*time.Minute-1, 0) // 12m would pass the cap: 10m
	scan(3*first+10*time.Minute, 1)   // 19m
	scan(3*first+20*time.Minute, 1)   // 29m: still 10m
	inbox.waitCount(t, "u-running", 5)

	ack := func(uuid protocol.StatusUUID) {
		t.Helper()
		httpTestRequest(t, nc, viaBody, protocol.MsgAcknowledgeRequest,
			protocol.AcknowledgeRequest{FrameworkID: fw.FrameworkID, Acks: []protocol.Acknowledgement{{
				AgentID: agent.AgentID, TaskID: "t1", UUID: uuid}}}, nil)
	}

	// A newer status waits behind the unacknowledged one: its commit sends
	// u-running again, and u-finished goes out only once u-running is
	// acknowledged, then waits a whole interval.
	update("u-finished", protocol.TaskFinished)
	inbox.waitCount(t, "u-running", 6)
	inbox.smu.Lock()
	early := inbox.got["u-finished"]
	inbox.smu.Unlock()
	if early != 0 {
		t.Fatalf("u-finished sent %d times before u-running was acknowledged", early)
	}
	ack("u-running")
	inbox.waitCount(t, "u-finished", 1)
	base := 3*first + 20*time.Minute
	scan(base+time.Second, 0)
	scan(base+time.Second+first, 1)
	inbox.waitCount(t, "u-finished", 2)

	// Acknowledged: never sent again, and forgotten.
	ack("u-finished")
	scan(base+time.Hour, 0)
	if n := len(l.retries.due); n != 0 {
		t.Errorf("%d statuses still watched after the acknowledgement", n)
	}
	if got := gatherSamples(t, m)["allot_status_updates_resent_total"]; got != 5 {
		t.Errorf("allot_status_updates_resent_total %v, want 5", got)
	}
	inbox.smu.Lock()
	defer inbox.smu.Unlock()
	if inbox.got["u-running"] != 6 || inbox.got["u-finished"] != 2 {
		t.Errorf("deliveries %v, want u-running 6 and u-finished 2", inbox.got)
	}
}

// TestMaster_StatusRetries_notWhileDisconnected: a framework the leader
// recorded as disconnected gets no resent statuses, however long they wait
// unacknowledged (its next subscribe sends every pending one).
//
// Mutant this catches (master/status_retry.go): the scan not skipping
// disconnected frameworks.
func TestMaster_StatusRetries_notWhileDisconnected(t *testing.T) {
	t.Parallel()
	const first = 3 * time.Minute
	m, nc, agent, fw, inbox := retryTestTask(t, first)
	httpTestRequest(t, nc, viaBody, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{
		AgentID: agent.AgentID, Updates: []protocol.StatusUpdate{{UUID: "u-running", Status: protocol.TaskStatus{
			TaskID: "t1", FrameworkID: fw.FrameworkID, AgentID: agent.AgentID, State: protocol.TaskRunning, UUID: "u-running"}}},
	}, nil)
	inbox.waitCount(t, "u-running", 1)
	l := leaderOf(t, m)
	t0 := time.Now()
	if got := l.retryStatuses(t0); got != 0 {
		t.Fatalf("first scan resent %d", got)
	}
	l.disconnected(fw.FrameworkID, t0)
	if f, ok := m.View().Framework(fw.FrameworkID); !ok || f.Connected {
		t.Fatalf("framework %+v, want recorded disconnected", f)
	}
	for _, at := range []time.Duration{first, 10 * first, time.Hour} {
		if got := l.retryStatuses(t0.Add(at)); got != 0 {
			t.Errorf("scan at +%s resent %d statuses to a disconnected framework", at, got)
		}
	}
}
