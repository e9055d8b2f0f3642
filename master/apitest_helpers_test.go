package master

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// operatorTestMaster runs a leading master with its HTTP API and the
// operator token, and a NATS connection to it.
func operatorTestMaster(t *testing.T, token string) (*Master, *nats.Conn) {
	t.Helper()
	return apiTestMaster(t, func(c *Config) { c.HTTPAddr, c.OperatorToken = "127.0.0.1:0", token })
}

// registerTestAgent registers an agent of 1 CPU and 1,000 MiB on host-1 and
// heartbeats once, which opens its resources to offers.
func registerTestAgent(t *testing.T, nc *nats.Conn) protocol.RegisterReply {
	t.Helper()
	return registerNamedAgent(t, nc, "host-1")
}

// registerNamedAgent is registerTestAgent on host.
func registerNamedAgent(t *testing.T, nc *nats.Conn, host string) protocol.RegisterReply {
	t.Helper()
	var agent protocol.RegisterReply
	httpTestRequest(t, nc, viaBody, protocol.MsgRegisterRequest, protocol.RegisterRequest{
		Hostname: host, Addresses: protocol.Addresses{HTTP: "127.0.0.1:5051"},
		Resources: protocol.Scalars(map[string]int64{"cpus": 1000, "mem": 1000}),
	}, &agent)
	httpTestRequest(t, nc, viaBody, protocol.MsgHeartbeatRequest,
		protocol.HeartbeatRequest{AgentID: agent.AgentID}, nil)
	return agent
}

// subscribeTestFramework subscribes a framework and hands every event sent
// to it to handle until the test ends.
func subscribeTestFramework(t *testing.T, nc *nats.Conn, req protocol.SubscribeRequest, handle nats.MsgHandler) protocol.SubscribeReply {
	t.Helper()
	subj := protocol.Subjects{Prefix: "allot"}
	var fw protocol.SubscribeReply
	httpTestRequest(t, nc, viaBody, protocol.MsgSubscribeRequest, req, &fw)
	events, err := subj.FrameworkEvents(req.Principal, fw.FrameworkID)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nc.Subscribe(events, handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return fw
}

// launchOnFirstOffer revives framework fw, waits for its first fair offer
// in inbox and launches on it task id (100 milli-CPUs, 100 MiB, "true") on
// agent.
func launchOnFirstOffer(t *testing.T, nc *nats.Conn, fw protocol.FrameworkID, inbox *offerInbox, agent protocol.AgentID, id protocol.TaskID) {
	t.Helper()
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw}, nil)
	offer := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	httpTestRequest(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
		FrameworkID: fw, OfferIDs: []protocol.OfferID{offer.ID},
		Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: []protocol.TaskInfo{{
			TaskID: id, AgentID: agent, Resources: protocol.Scalars(map[string]int64{"cpus": 100, "mem": 100}),
			Command: protocol.CommandInfo{Shell: true, Value: "true"},
		}}}},
	}, nil)
}
