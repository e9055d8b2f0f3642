package master

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// apiVerbs are every subject the leader serves, for framework fw and
// agent ag (a new framework's subscribe, a new agent's register), plus one
// it does not serve.
func apiVerbs(t testing.TB, s protocol.Subjects, fw protocol.FrameworkID, ag protocol.AgentID) []string {
	var out []string
	for _, v := range protocol.FrameworkVerbs() {
		id := fw
		if v == protocol.VerbSubscribe {
			id = ""
		}
		subject, err := s.APIFramework("", id, v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, subject)
	}
	for _, v := range protocol.AgentVerbs() {
		id := ag
		if v == protocol.VerbRegister {
			id = ""
		}
		subject, err := s.APIAgent("", id, v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, subject)
	}
	return append(out, "allot.api.framework.anonymous.new.nonsense")
}

// checkReply asserts the master answered with a well-formed reply whose
// error, if any, carries a code other than internal.
func checkReply(t *testing.T, msg *nats.Msg, err error) error {
	t.Helper()
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	rerr := protocol.DecodeReply(msg.Data, nil)
	if rerr != nil && protocol.CodeOf(rerr) == protocol.CodeInternal {
		t.Fatalf("internal error reply: %v", rerr)
	}
	return rerr
}

// FuzzAPI sends arbitrary bytes to every API subject of a running leader:
// each request must get a reply with a typed error code (or succeed), and
// the master must keep serving.
func FuzzAPI(f *testing.F) {
	s := protocol.Subjects{Prefix: "allot"}
	// The fuzz harness forbids f.Log while fuzzing; the master logs from
	// its own goroutines, so it gets a discarding logger.
	m, nc := apiTestMaster(f, func(cfg *Config) { cfg.Logger = hclog.NewNullLogger() })
	// A framework and an agent the subjects name, so requests get past
	// the checks of who calls to the decoder and the handlers.
	var sub protocol.SubscribeReply
	if err := apiTestCall(f, nc, viaBody, protocol.MsgSubscribeRequest, protocol.SubscribeRequest{Name: "fuzz", Role: "eng"}, &sub); err != nil {
		f.Fatal(err)
	}
	var reg protocol.RegisterReply
	if err := apiTestCall(f, nc, viaBody, protocol.MsgRegisterRequest, protocol.RegisterRequest{Hostname: "h",
		Resources: protocol.Scalars(map[string]int64{"cpus": 1000})}, &reg); err != nil {
		f.Fatal(err)
	}
	fw, ag := sub.FrameworkID, reg.AgentID
	verbs := apiVerbs(f, s, fw, ag)
	seed := func(verb int, t protocol.MsgType, body any) {
		data, err := protocol.Encode(t, body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(verb), data)
	}
	f.Add(byte(0), []byte{})
	f.Add(byte(1), []byte{0xc1})
	f.Add(byte(2), []byte{0x93, 0x01, 0x03, 0xdd, 0xff, 0xff, 0xff, 0xff})
	seed(0, protocol.MsgSubscribeRequest, protocol.SubscribeRequest{Name: "fuzz", Role: "eng"})
	seed(2, protocol.MsgAcceptRequest, protocol.AcceptRequest{FrameworkID: fw, OfferIDs: []protocol.OfferID{"of-x"}})
	seed(3, protocol.MsgDeclineRequest, protocol.DeclineRequest{FrameworkID: fw, OfferIDs: []protocol.OfferID{"of-x"}})
	seed(11, protocol.MsgRegisterRequest, protocol.RegisterRequest{Hostname: "h",
		Resources: protocol.Scalars(map[string]int64{"cpus": 1000})})
	seed(13, protocol.MsgHeartbeatRequest, protocol.HeartbeatRequest{AgentID: ag})
	seed(14, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{AgentID: ag,
		Updates: []protocol.StatusUpdate{{UUID: "u1", Status: protocol.TaskStatus{TaskID: "t", FrameworkID: "fw-x", State: protocol.TaskRunning}}}})
	seed(5, protocol.MsgSubscribeRequest, protocol.SubscribeRequest{Name: "wrong type for the revive subject", Role: "eng"})
	// A well-formed request for every other handler, so each one is
	// reached, not only the decoder; and one naming another framework.
	seed(1, protocol.MsgTeardownRequest, protocol.TeardownRequest{FrameworkID: "fw-forged"})
	seed(4, protocol.MsgSuppressRequest, protocol.SuppressRequest{FrameworkID: fw})
	seed(5, protocol.MsgReviveRequest, protocol.ReviveRequest{FrameworkID: fw})
	seed(6, protocol.MsgKillRequest, protocol.KillRequest{FrameworkID: fw, TaskID: "t-x"})
	seed(7, protocol.MsgReconcileRequest, protocol.ReconcileRequest{FrameworkID: fw,
		Tasks: []protocol.ReconcileTask{{TaskID: "t-x", AgentID: "ag-x"}}})
	seed(8, protocol.MsgAcknowledgeRequest, protocol.AcknowledgeRequest{FrameworkID: fw,
		Acks: []protocol.Acknowledgement{{TaskID: "t-x", UUID: "u-x"}}})
	seed(9, protocol.MsgDemandRequest, protocol.DemandRequest{FrameworkID: fw,
		Demand: []protocol.TaskShape{{Resources: protocol.Scalars(map[string]int64{"cpus": 10}), Count: 3}}})
	seed(10, protocol.MsgCoflowRegisterRequest, protocol.CoflowRegisterRequest{FrameworkID: fw, CoflowID: "c",
		Flows: []protocol.FlowSpec{{Src: "ag-x", Dst: "ag-y", Bytes: 1}}})
	seed(12, protocol.MsgReregisterRequest, protocol.ReregisterRequest{AgentID: ag, Hostname: "h",
		Resources: protocol.Scalars(map[string]int64{"cpus": 1000}),
		Tasks:     []protocol.TaskStatus{{TaskID: "t", FrameworkID: fw, State: protocol.TaskRunning}}})
	seed(15, protocol.MsgCoflowReportRequest, protocol.CoflowReportRequest{AgentID: ag,
		Flows: []protocol.FlowProgress{{FrameworkID: fw, CoflowID: "c", Src: "ag-x", Dst: "ag-y", BytesSent: 1, Transfers: 1}}})
	seed(16, protocol.MsgHeartbeatRequest, protocol.HeartbeatRequest{AgentID: ag})
	f.Fuzz(func(t *testing.T, verb byte, payload []byte) {
		subject := verbs[int(verb)%len(verbs)]
		msg, err := nc.Request(subject, payload, 5*time.Second)
		checkReply(t, msg, err)
		if !m.IsLeader() {
			t.Fatal("master stopped serving after a request")
		}
	})
}

// TestAPI_BadInput covers the bad input a master must survive: forged
// and unknown IDs, an accept beyond its offers, a second accept of the same
// offer, and an oversized message. Each gets a typed error; nothing changes.
func TestAPI_BadInput(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	s := protocol.Subjects{Prefix: "allot"}
	call := func(subject string, typ protocol.MsgType, body, reply any) error {
		t.Helper()
		return apiTestCall(t, nc, subject, typ, body, reply)
	}
	sub, events, offer := badInputOffer(t, nc, s)
	task := func(id string, cpus int64) protocol.TaskInfo {
		return protocol.TaskInfo{TaskID: protocol.TaskID(id), Name: id, AgentID: offer.AgentID,
			Resources: protocol.Scalars(map[string]int64{"cpus": cpus}),
			Command:   protocol.CommandInfo{Shell: true, Value: "true"}}
	}
	accept := func(fw protocol.FrameworkID, ids []protocol.OfferID, tasks ...protocol.TaskInfo) error {
		return call(viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
			FrameworkID: fw, OfferIDs: ids,
			Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: tasks}},
		}, nil)
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"unknown framework", accept("fw-forged", []protocol.OfferID{offer.ID}, task("t0", 100)), protocol.ErrUnknownFramework},
		{"unknown offer", accept(sub.FrameworkID, []protocol.OfferID{"of-forged"}, task("t1", 100)), protocol.ErrUnknownOffer},
		{"beyond the offer", accept(sub.FrameworkID, []protocol.OfferID{offer.ID}, task("t2", 1_000_000)), protocol.ErrInsufficient},
		{"heartbeat from a forged agent", call(viaBody, protocol.MsgHeartbeatRequest,
			protocol.HeartbeatRequest{AgentID: "ag-forged"}, nil), protocol.ErrUnknownAgent},
		{"decline for another framework", call(viaBody, protocol.MsgDeclineRequest,
			protocol.DeclineRequest{FrameworkID: "fw-other", OfferIDs: []protocol.OfferID{offer.ID}}, nil), protocol.ErrUnknownFramework},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	wrongAgent := task("t5", 100)
	wrongAgent.AgentID = "ag-elsewhere"
	if err := accept(sub.FrameworkID, []protocol.OfferID{offer.ID}, wrongAgent); !errors.Is(err, protocol.ErrOfferMismatch) {
		t.Errorf("task naming another agent: got %v, want ErrOfferMismatch", err)
	}
	if err := accept(sub.FrameworkID, []protocol.OfferID{offer.ID}, task("t3", 100)); err != nil {
		t.Fatalf("valid accept after the refused ones: %v", err)
	}
	if err := accept(sub.FrameworkID, []protocol.OfferID{offer.ID}, task("t4", 100)); !errors.Is(err, protocol.ErrUnknownOffer) {
		t.Errorf("second accept of the same offer: got %v, want ErrUnknownOffer", err)
	}
	noCommand := task("t6", 100)
	noCommand.Command = protocol.CommandInfo{}
	if err := accept(sub.FrameworkID, []protocol.OfferID{offer.ID}, noCommand); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Errorf("task without a command: got %v, want ErrInvalidArgument", err)
	}
	if tasks := m.View().Tasks(); len(tasks) != 1 || tasks[0].ID != "t3" {
		t.Errorf("got %d tasks in the state, want only t3", len(tasks))
	}
	// Every refused task also ends with a status and a reason: LOST (the
	// framework is not partition aware; DROPPED otherwise) for stale or
	// unknown offers, which a new launch may cure, ERROR for an invalid
	// task or one beyond its offers. The launched t3, whose ID a refused
	// accept did not reuse, gets none.
	lost, invalid := string(protocol.TaskLost)+" "+protocol.ReasonInvalidOffers, string(protocol.TaskError)+" "+protocol.ReasonTaskInvalid
	want := map[protocol.TaskID]string{"t1": lost, "t2": invalid, "t5": lost, "t4": lost, "t6": invalid}
	got := badInputRefusals(t, events, want)
	if !maps.Equal(got, want) {
		t.Errorf("got refusals %v, want %v", got, want)
	}
	big := make([]byte, protocol.MaxMessageSize+1)
	register, _ := s.APIAgent("", "", protocol.VerbRegister)
	msg, err := nc.Request(register, big, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := protocol.DecodeReply(msg.Data, nil); !errors.Is(err, protocol.ErrTooLarge) {
		t.Errorf("oversized message: got %v, want ErrTooLarge", err)
	}
}

// badInputOffer registers an agent and subscribes a framework, and returns
// the framework, its events (on the subjects s) and its first offer.
func badInputOffer(t *testing.T, nc *nats.Conn, s protocol.Subjects) (protocol.SubscribeReply, chan *nats.Msg, protocol.Offer) {
	t.Helper()
	var reg protocol.RegisterReply
	if err := apiTestCall(t, nc, viaBody, protocol.MsgRegisterRequest, protocol.RegisterRequest{
		Hostname: "a1", Resources: protocol.Scalars(map[string]int64{"cpus": 2000, "mem": 1024}),
	}, &reg); err != nil {
		t.Fatal(err)
	}
	// An agent's resources are offered from its first heartbeat.
	if err := apiTestCall(t, nc, viaBody, protocol.MsgHeartbeatRequest,
		protocol.HeartbeatRequest{AgentID: reg.AgentID}, nil); err != nil {
		t.Fatal(err)
	}
	var sub protocol.SubscribeReply
	if err := apiTestCall(t, nc, viaBody, protocol.MsgSubscribeRequest,
		protocol.SubscribeRequest{Name: "f", Role: "eng"}, &sub); err != nil {
		t.Fatal(err)
	}
	events := make(chan *nats.Msg, 256)
	evSubject, _ := s.FrameworkEvents("", sub.FrameworkID)
	if _, err := nc.ChanSubscribe(evSubject, events); err != nil {
		t.Fatal(err)
	}
	// Offers start with the first request after subscribing.
	if err := apiTestCall(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: sub.FrameworkID}, nil); err != nil {
		t.Fatal(err)
	}
	var offer protocol.Offer
	deadline := time.After(10 * time.Second)
	for offer.ID == "" {
		select {
		case msg := <-events:
			env, err := protocol.Decode(msg.Data)
			if err == nil && env.Type == protocol.MsgOffersEvent {
				var ev protocol.OffersEvent
				if err := protocol.DecodeBody(env, &ev); err == nil && len(ev.Offers) > 0 {
					offer = ev.Offers[0]
				}
			}
		case <-deadline:
			t.Fatal("no offer within 10s")
		}
	}
	return sub, events, offer
}

// badInputRefusals collects from events the terminal status (state and
// reason) of each refused task until there are as many as in want.
func badInputRefusals(t *testing.T, events <-chan *nats.Msg, want map[protocol.TaskID]string) map[protocol.TaskID]string {
	t.Helper()
	got := map[protocol.TaskID]string{}
	deadline := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case msg := <-events:
			env, err := protocol.Decode(msg.Data)
			if err != nil || env.Type != protocol.MsgStatusUpdateEvent {
				continue
			}
			var ev protocol.StatusUpdateEvent
			if err := protocol.DecodeBody(env, &ev); err != nil {
				t.Fatal(err)
			}
			if st := ev.Status; st.State.Terminal() && ev.UUID == "" {
				if st.Message == "" {
					t.Errorf("%s for %s: no message", st.State, st.TaskID)
				}
				got[st.TaskID] = string(st.State) + " " + st.Reason
			}
		case <-deadline:
			t.Fatalf("got refusals %v within 10s, want %v", got, want)
		}
	}
	return got
}
