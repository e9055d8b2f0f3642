package master

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

func TestHeartbeatInterval_boundsTheRate(t *testing.T) {
	c := Config{AgentHeartbeat: time.Second, AgentTimeout: 15 * time.Second, MaxHeartbeatsPerSecond: 2000}
	for _, tc := range []struct {
		agents   int
		interval time.Duration
		timeout  time.Duration
	}{
		{0, time.Second, 15 * time.Second},
		{2000, time.Second, 15 * time.Second},
		{2001, 2 * time.Second, 15 * time.Second},
		{10000, 5 * time.Second, 15 * time.Second},
		{10001, 6 * time.Second, 18 * time.Second},
		{50000, 25 * time.Second, 75 * time.Second},
	} {
		got := c.heartbeatInterval(tc.agents)
		if got != tc.interval {
			t.Errorf("%d agents: interval %v, want %v", tc.agents, got, tc.interval)
		}
		if rate := float64(tc.agents) / got.Seconds(); rate > c.MaxHeartbeatsPerSecond {
			t.Errorf("%d agents every %v: %.0f heartbeats a second, over %v", tc.agents, got, rate, c.MaxHeartbeatsPerSecond)
		}
		if timeout := c.agentTimeout(got); timeout != tc.timeout {
			t.Errorf("%d agents: timeout %v, want %v", tc.agents, timeout, tc.timeout)
		}
		// Not for one late heartbeat, and in time for a short-lived leader.
		if after := c.silentAfter(got); after <= got || after > tc.timeout/2 {
			t.Errorf("%d agents: silence recorded after %v, want more than a heartbeat (%v) and at most half the timeout", tc.agents, after, got)
		}
	}
	c.MaxHeartbeatsPerSecond = 0
	if got := c.heartbeatInterval(1_000_000); got != time.Second {
		t.Errorf("no bound: interval %v for a million agents, want the configured %v", got, time.Second)
	}
}

// TestAnnounceDue_followsTheHeartbeatPace: checked on every tick of a
// second (each a little late or early), the periodic announcement is made
// once per heartbeat interval, so the agents, who all receive it, get no
// more a second than MaxHeartbeatsPerSecond; while agents are few, on every
// tick.
func TestAnnounceDue_followsTheHeartbeatPace(t *testing.T) {
	c := Config{AgentHeartbeat: time.Second, AgentTimeout: 15 * time.Second, MaxHeartbeatsPerSecond: 2000}
	for _, agents := range []int{10, 2000, 10000, 50000} {
		interval := c.heartbeatInterval(agents)
		start := time.Unix(1_000_000, 0)
		last, made := start, 0
		var shortest time.Duration = -1
		for tick := 1; tick <= 600; tick++ {
			jitter := time.Duration((tick*7919)%41-20) * time.Millisecond // within ±20 ms
			now := start.Add(time.Duration(tick)*time.Second + jitter)
			if announceDue(last, now, interval, c.AgentHeartbeat) {
				if gap := now.Sub(last); shortest < 0 || gap < shortest {
					shortest = gap
				}
				last = now
				made++
			}
		}
		want := int(600 * time.Second / interval)
		if made < want-1 || made > want {
			t.Errorf("%d agents, interval %v: %d announcements in 600 s, want %d", agents, interval, made, want)
		}
		if rate := float64(made*agents) / 600; agents > 2000 && rate > c.MaxHeartbeatsPerSecond*1.01 {
			t.Errorf("%d agents: %.0f deliveries a second, over %v", agents, rate, c.MaxHeartbeatsPerSecond)
		}
		if shortest < interval-c.AgentHeartbeat/2 {
			t.Errorf("%d agents: two announcements %v apart, interval %v", agents, shortest, interval)
		}
	}
}

// TestHeartbeatPace_growsWithTheAgents: at one heartbeat a second for the
// whole cluster, each agent registered is asked for a heartbeat one second
// less often, the earlier agents learn the longer interval from their next
// heartbeat's reply, and none is marked unreachable until three of the
// longest intervals have passed, though the configured timeout is shorter.
func TestHeartbeatPace_growsWithTheAgents(t *testing.T) {
	m, nc := apiTestMaster(t, func(c *Config) {
		c.AgentHeartbeat, c.AgentTimeout, c.MaxHeartbeatsPerSecond = time.Second, 2*time.Second, 1
	})
	var ids []protocol.AgentID
	for i := range 3 {
		var reg protocol.RegisterReply
		httpTestRequest(t, nc, viaBody, protocol.MsgRegisterRequest, protocol.RegisterRequest{
			Hostname: fmt.Sprintf("host-%d", i), Addresses: protocol.Addresses{HTTP: "127.0.0.1:5051"},
			Resources: protocol.Scalars(map[string]int64{"cpus": 1000, "mem": 1000}),
		}, &reg)
		if want := time.Duration(i+1) * time.Second; reg.HeartbeatInterval != want {
			t.Fatalf("agent %d registered with a heartbeat of %v, want %v", i+1, reg.HeartbeatInterval, want)
		}
		ids = append(ids, reg.AgentID)
	}
	var beat protocol.HeartbeatReply
	httpTestRequest(t, nc, viaBody, protocol.MsgHeartbeatRequest, protocol.HeartbeatRequest{AgentID: ids[0]}, &beat)
	if beat.HeartbeatInterval != 3*time.Second {
		t.Fatalf("first agent's heartbeat answered with %v, want the grown 3s", beat.HeartbeatInterval)
	}

	l := leaderOf(t, m)
	now := time.Now()
	l.checkAgents(now.Add(8 * time.Second)) // past the configured 2s, within 3 × 3s
	for _, id := range ids {
		if a, ok := m.View().Agent(id); !ok || a.State != state.AgentActive {
			t.Fatalf("agent %s after 8s of a 3s heartbeat: %+v, want active", id, a)
		}
	}
	l.checkAgents(now.Add(10 * time.Second))
	for _, id := range ids {
		if a, ok := m.View().Agent(id); !ok || a.State != state.AgentUnreachable {
			t.Errorf("agent %s after 10s of a 3s heartbeat: %+v, want unreachable", id, a)
		}
	}
}

// TestAPI_frameworkCallsNotBehindAgents: with every handler of the agents'
// lane busy (a flood of heartbeats and status updates), a framework's call
// is answered at once, and the agent's heartbeat once the lane frees.
func TestAPI_frameworkCallsNotBehindAgents(t *testing.T) {
	m, nc := apiTestMaster(t, nil)
	agent := registerTestAgent(t, nc)
	m.mu.Lock()
	l := m.leader
	m.mu.Unlock()
	if l == nil {
		t.Fatal("the master does not lead")
	}
	for range cap(l.agentWork) {
		l.agentWork <- struct{}{}
	}
	data, err := protocol.Encode(protocol.MsgHeartbeatRequest, protocol.HeartbeatRequest{AgentID: agent.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	subject, err := protocol.Subjects{}.APIAgent("", agent.AgentID, protocol.VerbHeartbeat)
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() {
		_, err := nc.Request(subject, data, 10*time.Second)
		answered <- err
	}()
	var fw protocol.SubscribeReply
	httpTestRequest(t, nc, viaBody, protocol.MsgSubscribeRequest, protocol.SubscribeRequest{Name: "lanes", Role: "eng"}, &fw)
	if fw.FrameworkID == "" {
		t.Fatal("framework subscribed without an ID")
	}
	select {
	case err := <-answered:
		t.Fatalf("heartbeat answered (%v) while the agents' lane is full", err)
	default:
	}
	for range cap(l.agentWork) {
		<-l.agentWork
	}
	if err := <-answered; err != nil {
		t.Fatalf("heartbeat once the lane freed: %v", err)
	}
}
