package natsauth

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Identities the table checks.
var (
	masterM1   = protocol.Identity{Kind: protocol.KindMaster, Name: "m1"}
	masterM2   = protocol.Identity{Kind: protocol.KindMaster, Name: "m2"}
	frameworkA = protocol.Identity{Kind: protocol.KindFramework, Name: "a"}
	agentRack1 = protocol.Identity{Kind: protocol.KindAgent, Name: "rack1"}
	operatorAd = protocol.Identity{Kind: protocol.KindOperator, Name: DefaultOperator}
)

// tableChecks is what each kind must and must not be able to do, under
// prefix p.
func tableChecks(p string) map[protocol.Identity][]check {
	return map[protocol.Identity][]check{
		masterM1: {
			pubOK(p + ".fw.a.fw-1.events"), pubOK(p + ".agent.rack1.ag-1.cmd"),
			pubOK(p + ".leader"), pubOK(p + ".events"), pubOK("anything.else"),
			subOK(p+".api.>", p+".api.framework.a.new.subscribe"),
			subOK(">", p+".api.agent.rack2.ag-2.heartbeat"),
		},
		frameworkA: {
			pubOK(p + ".api.framework.a.new.subscribe"), pubOK(p + ".api.framework.a.fw-1.accept"),
			subOK(p+".fw.a.>", p+".fw.a.fw-1.events"), subOK(p+".fw.a.fw-1.events", ""),
			subOK(p+".leader", ""),
			subOK(p+".inbox.framework.a.>", p+".inbox.framework.a.r1.1"),

			pubDenied(p + ".api.framework.b.fw-2.accept"), // another principal's calls
			pubDenied(p + ".api.agent.a.new.register"),    // the same name as another kind
			pubDenied(p + ".api.framework.a"),             // ">" needs one more token
			pubDenied(p + ".fw.a.fw-1.events"),            // only the leader sends events
			pubDenied(p + ".fw.b.fw-2.events"),
			pubDenied(p + ".leader"),
			pubDenied(p + ".events"),
			pubDenied(p + ".inbox.master.m1.r1"), // a reply nobody asked for
			pubDenied("_INBOX.unrequested"),
			subDenied(p+".fw.b.>", p+".fw.b.fw-2.events"), // another principal's events
			subDenied(p+".fw.b.fw-2.events", ""),
			subDenied(p+".fw.>", p+".fw.b.fw-2.events"), // wider than its own
			subDenied(">", p+".fw.b.fw-2.events"),
			subDenied(p+".events", ""),
			subDenied(p+".agent.rack1.ag-1.cmd", ""),
			pubDenied(p + ".shuffle.ag-1.ingress"), // no framework asks an agent's ingress
			subDenied(p+".shuffle.*.ingress", p+".shuffle.ag-1.ingress"),
			subDenied(p+".api.>", p+".api.framework.b.new.subscribe"), // others' calls
			subDenied(p+".inbox.framework.b.>", p+".inbox.framework.b.r1.1"),
			subDenied("_INBOX.>", "_INBOX.x.1"),
		},
		agentRack1: {
			pubOK(p + ".api.agent.rack1.new.register"), pubOK(p + ".api.agent.rack1.ag-1.heartbeat"),
			subOK(p+".agent.rack1.>", p+".agent.rack1.ag-1.cmd"),
			subOK(p+".leader", ""),
			subOK(p+".inbox.agent.rack1.>", p+".inbox.agent.rack1.r1.1"),
			pubOK(p + ".shuffle.ag-2.ingress"), subOK(p+".shuffle.ag-1.ingress", ""),
			subOK(p+".shuffle.*.ingress", p+".shuffle.ag-2.ingress"),
			pubDenied(p + ".shuffle.ag-2.egress"),
			pubDenied(p + ".inbox.agent.rack2.r1.1"), // a reply nobody asked for

			pubDenied(p + ".api.agent.rack2.ag-2.heartbeat"),
			pubDenied(p + ".api.framework.rack1.new.subscribe"),
			pubDenied(p + ".leader"),
			pubDenied(p + ".agent.rack2.ag-2.cmd"),
			pubDenied(p + ".events"),
			subDenied(p+".agent.rack2.>", p+".agent.rack2.ag-2.cmd"),
			subDenied(p+".agent.>", p+".agent.rack2.ag-2.cmd"),
			subDenied(p+".fw.a.>", p+".fw.a.fw-1.events"),
			subDenied(p+".events", ""),
			subDenied(">", p+".agent.rack2.ag-2.cmd"),
			subDenied(p+".inbox.agent.rack2.>", p+".inbox.agent.rack2.r1.1"),
		},
		operatorAd: {
			subOK(p+".events", ""), subOK(p+".leader", ""),
			subOK(p+".inbox.operator.admin.>", p+".inbox.operator.admin.r1.1"),

			pubDenied(p + ".events"),
			pubDenied(p + ".leader"),
			pubDenied(p + ".api.framework.a.new.subscribe"),
			pubDenied(p + ".inbox.operator.admin.r1.1"), // not even its own inbox
			subDenied(p+".fw.a.>", p+".fw.a.fw-1.events"),
			subDenied(p+".agent.rack1.>", p+".agent.rack1.ag-1.cmd"),
			pubDenied(p + ".shuffle.ag-1.ingress"),
			subDenied(p+".shuffle.*.ingress", p+".shuffle.ag-1.ingress"),
			subDenied(p+".api.>", p+".api.framework.a.new.subscribe"),
			subDenied(">", p+".events"),
			subDenied(p+".inbox.operator.other.>", p+".inbox.operator.other.r1.1"),
		},
	}
}

// runTable checks every kind's permissions on the server at url, each
// identity connecting with the options login gives it.
func runTable(t *testing.T, url string, login func(protocol.Identity) []nats.Option) {
	t.Helper()
	p := testSubjects.Prefix
	observer := connect(t, masterM2.String(), url, login(masterM2)...)
	for id, checks := range tableChecks(p) {
		t.Run(id.String(), func(t *testing.T) {
			c := connect(t, id.String(), url, login(id)...)
			runChecks(t, observer, c, checks)
		})
	}
	t.Run("framework answers a request once", func(t *testing.T) {
		fw := connect(t, frameworkA.String(), url, login(frameworkA)...)
		checkResponses(t, observer, fw, p+".fw.a.fw-1.events", true)
	})
	// Agents answer one another's shuffle ingress requests; the leader
	// sends them none, so the answer is to an agent's ask in practice.
	t.Run("agent answers a request once", func(t *testing.T) {
		ag := connect(t, agentRack1.String(), url, login(agentRack1)...)
		checkResponses(t, observer, ag, p+".shuffle.ag-1.ingress", true)
	})
}

// checkResponses has the observer send c a request on subject and c
// answer it twice: the first answer crosses when c may answer requests,
// the second never does.
func checkResponses(t *testing.T, observer, c *client, subject string, answers bool) {
	t.Helper()
	requests := make(chan *nats.Msg, 4)
	sub, err := c.nc.ChanSubscribe(subject, requests)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	c.flush(t)
	reply := testSubjects.Inbox(protocol.KindMaster, masterM2.Name) + ".hb.1"
	replies := make(chan *nats.Msg, 4)
	rsub, err := observer.nc.ChanSubscribe(reply, replies)
	if err != nil {
		t.Fatal(err)
	}
	defer rsub.Unsubscribe()
	if err := observer.nc.PublishRequest(subject, reply, []byte("heartbeat?")); err != nil {
		t.Fatal(err)
	}
	observer.flush(t)
	req := receive(t, c.name, requests, subject)
	if err := req.Respond([]byte("alive")); err != nil {
		t.Fatal(err)
	}
	if answers {
		c.flush(t)
		receive(t, "the answer", replies, reply)
	} else {
		c.expectViolation(t, "Publish", reply)
	}
	// Once answered (or refused), the reply subject is closed to c.
	if err := req.Respond([]byte("again")); err != nil {
		t.Fatal(err)
	}
	c.expectViolation(t, "Publish", reply)
	c.flush(t)
	observer.flush(t)
	expectNothing(t, "a second answer", replies)
}
