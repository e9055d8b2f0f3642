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

// shareInbox collects the share updates a framework is sent.
type shareInbox struct {
	mu     sync.Mutex
	events []protocol.ShareUpdateEvent
}

func (b *shareInbox) receive(msg *nats.Msg) {
	ev, ok := decodeEvent[protocol.ShareUpdateEvent](msg, protocol.MsgShareUpdateEvent)
	if !ok {
		return
	}
	b.mu.Lock()
	b.events = append(b.events, ev)
	b.mu.Unlock()
}

// waitCPUs waits until the last update received says the fair share is
// cpus milli-CPU, and returns how many updates had arrived by then.
func (b *shareInbox) waitCPUs(t *testing.T, cpus int64) int {
	t.Helper()
	var n int
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		n = len(b.events)
		if n == 0 {
			return fmt.Errorf("no share update yet")
		}
		if got := b.events[n-1].FairShare["cpus"]; got != cpus {
			return fmt.Errorf("last fair share %d milli-CPU, want %d", got, cpus)
		}
		return nil
	})
	return n
}

// TestMaster_ShareUpdates: the leader tells each framework its H-DRF fair
// share when it changes: alone, an altruistic framework's share is the
// whole agent, optional work included; a second framework's demand halves
// it; withdrawing that demand restores it and leaves the second one with
// an empty share. Unchanged shares are not sent again.
func TestMaster_ShareUpdates(t *testing.T) {
	t.Parallel()
	_, nc := apiTestMaster(t, func(c *Config) { c.ShareUpdateInterval = 0 })
	subscribe := shareTestCluster(t, nc)
	task := protocol.Scalars(map[string]int64{"cpus": 100, "mem": 10})
	shape := func(n int64) []protocol.TaskShape { return []protocol.TaskShape{{Resources: task, Count: n}} }

	altID, alt := subscribe("alt", "a", protocol.DemandRequest{Demand: shape(10), MustStart: shape(1), Optional: shape(9), RemainingWork: 10})
	alt.waitCPUs(t, 1000)
	alt.mu.Lock()
	ev := alt.events[len(alt.events)-1]
	alt.mu.Unlock()
	if ev.Role != "a" {
		t.Errorf("share update role = %q, want a", ev.Role)
	}

	greedyID, greedy := subscribe("greedy", "b", protocol.DemandRequest{Demand: shape(10)})
	greedy.waitCPUs(t, 500)
	before := alt.waitCPUs(t, 500)

	httpTestRequest(t, nc, viaBody, protocol.MsgDemandRequest,
		protocol.DemandRequest{FrameworkID: greedyID}, nil)
	greedy.waitCPUs(t, 0)
	after := alt.waitCPUs(t, 1000)
	if after != before+1 {
		t.Errorf("%s got %d share updates between the two changes, want exactly 1", altID, after-before)
	}
}

// TestMaster_FirstShareWithoutWaiting: however long the share update
// interval, a framework's first demand report gets it its share in the
// next round, so its planner never starts on offers without one.
func TestMaster_FirstShareWithoutWaiting(t *testing.T) {
	t.Parallel()
	_, nc := apiTestMaster(t, func(c *Config) { c.ShareUpdateInterval = time.Hour })
	subscribe := shareTestCluster(t, nc)
	shape := []protocol.TaskShape{{Resources: protocol.Scalars(map[string]int64{"cpus": 100, "mem": 10}), Count: 10}}
	_, first := subscribe("first", "a", protocol.DemandRequest{Demand: shape})
	first.waitCPUs(t, 1000)
	_, second := subscribe("second", "b", protocol.DemandRequest{Demand: shape})
	second.waitCPUs(t, 500)
	first.waitCPUs(t, 500)
}

// shareTestCluster registers one agent of 1 CPU and returns a function
// that subscribes a framework (suppressed), listens on its events,
// declares its demand and then opens its offers.
func shareTestCluster(t *testing.T, nc *nats.Conn) func(name, role string, d protocol.DemandRequest) (protocol.FrameworkID, *shareInbox) {
	t.Helper()
	registerTestAgent(t, nc)
	return func(name, role string, d protocol.DemandRequest) (protocol.FrameworkID, *shareInbox) {
		t.Helper()
		inbox := &shareInbox{}
		fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: name, Principal: "p", Role: role, Suppressed: true},
			inbox.receive)
		d.FrameworkID = fw.FrameworkID
		httpTestRequest(t, nc, viaBody, protocol.MsgDemandRequest, d, nil)
		httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
			protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
		return fw.FrameworkID, inbox
	}
}
