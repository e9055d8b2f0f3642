package master

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestMaster_EventStream: GET /v1/events streams, as JSON lines, the
// agent, framework and task changes the leader commits after it connects.
func TestMaster_EventStream(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.HTTPAddr()+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("GET /v1/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := make(chan protocol.ClusterEvent, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev protocol.ClusterEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				events <- ev
			}
		}
		close(events)
	}()
	// wait takes events until one matches.
	wait := func(what string, match func(protocol.ClusterEvent) bool) protocol.ClusterEvent {
		t.Helper()
		var got protocol.ClusterEvent
		testutil.WaitFor(t, 10*time.Second, time.Millisecond, func() error {
			for {
				select {
				case ev, ok := <-events:
					if !ok {
						t.Fatal("the stream ended")
					}
					if match(ev) {
						got = ev
						return nil
					}
				default:
					return fmt.Errorf("no %s event yet", what)
				}
			}
		})
		return got
	}

	agent := registerTestAgent(t, nc)
	ev := wait("agent", func(ev protocol.ClusterEvent) bool {
		return ev.Type == protocol.ClusterEventAgent && ev.Agent != nil && ev.Agent.AgentID == agent.AgentID
	})
	if ev.Agent.State != "active" || ev.Agent.Hostname != "host-1" || ev.Time == 0 {
		t.Fatalf("agent event: %+v", ev.Agent)
	}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "stream", Role: "eng"}, func(*nats.Msg) {})
	ev = wait("framework", func(ev protocol.ClusterEvent) bool {
		return ev.Type == protocol.ClusterEventFramework && ev.Framework != nil && ev.Framework.FrameworkID == fw.FrameworkID
	})
	if ev.Framework.State != "subscribed" || ev.Framework.Name != "stream" || ev.Framework.Role != "eng" {
		t.Fatalf("framework event: %+v", ev.Framework)
	}
	httpTestRequest(t, nc, viaBody, protocol.MsgTeardownRequest,
		protocol.TeardownRequest{FrameworkID: fw.FrameworkID}, nil)
	wait("framework removed", func(ev protocol.ClusterEvent) bool {
		return ev.Type == protocol.ClusterEventFramework && ev.Framework != nil &&
			ev.Framework.FrameworkID == fw.FrameworkID && ev.Framework.State == "removed"
	})
}
