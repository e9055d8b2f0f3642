package master

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

func TestMaster_HTTP(t *testing.T) {
	t.Parallel()
	m := runHTTPTestMaster(t, httpTestConfig(t, raftstore.NewInmemNetwork(), "m1", nil, nil))
	httpTestWaitLeader(t, m)
	base := "http://" + m.HTTPAddr()

	if code, _, body := httpTestGet(t, base+"/healthz"); code != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("GET /healthz: got %d %q, want 200 ok", code, body)
	}
	info := httpTestLeaderJSON(t, m)
	want := api.Leader{LeaderID: "m1", LeaderRaftAddr: m.RaftAddr(), LeaderHTTPAddr: m.HTTPAddr(), SelfID: "m1", IsLeader: true, RaftIndex: info.RaftIndex}
	if info != want {
		t.Fatalf("GET /v1/leader: got %+v, want %+v", info, want)
	}
	if code, _, _ := httpTestGet(t, base+"/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: got %d, want 404", code)
	}

	nc, err := nats.Connect(m.NATSURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var agent protocol.RegisterReply
	httpTestRequest(t, nc, viaBody, protocol.MsgRegisterRequest, protocol.RegisterRequest{
		Hostname:   "host-1",
		Addresses:  protocol.Addresses{HTTP: "127.0.0.1:5051"},
		Resources:  protocol.Scalars(map[string]int64{"cpus": 4000, "mem": 8192}),
		Attributes: protocol.Attributes{"rack": protocol.Text("r1"), "gbps": protocol.Number(25), "isa": protocol.Set("sse", "avx")},
	}, &agent)
	// An agent's resources are offered from its first heartbeat.
	httpTestRequest(t, nc, viaBody, protocol.MsgHeartbeatRequest,
		protocol.HeartbeatRequest{AgentID: agent.AgentID}, nil)
	var fw protocol.SubscribeReply
	httpTestRequest(t, nc, viaBody, protocol.MsgSubscribeRequest, protocol.SubscribeRequest{
		Name: "wordcount", Principal: "alice", Role: "eng", FailoverTimeout: time.Minute,
	}, &fw)
	// Offers start with the framework's first request after subscribing.
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)

	// An allocation round offers the agent to the framework.
	st, raw := httpTestWaitOffer(t, base)
	if st.RaftIndex == 0 {
		t.Errorf("raft_index: got 0, want > 0")
	}
	if len(st.Agents) != 1 {
		t.Fatalf("agents: got %d, want 1", len(st.Agents))
	}
	a := st.Agents[0]
	if a.ID != agent.AgentID || a.Hostname != "host-1" || a.HTTP != "127.0.0.1:5051" || a.State != "active" ||
		a.Resources.Scalars["cpus"] != 4000 || a.RegisteredAt == nil {
		t.Errorf("agent: got %+v, want %s on host-1, active, 4000 cpus", a, agent.AgentID)
	}
	wantAttrs := map[string]any{"rack": "r1", "gbps": 25.0, "isa": []any{"avx", "sse"}}
	gotAttrs := raw["agents"].([]any)[0].(map[string]any)["attributes"]
	if fmt.Sprint(gotAttrs) != fmt.Sprint(wantAttrs) {
		t.Errorf("agent attributes: got %v, want %v", gotAttrs, wantAttrs)
	}
	if len(st.Frameworks) != 1 {
		t.Fatalf("frameworks: got %d, want 1", len(st.Frameworks))
	}
	f := st.Frameworks[0]
	if f.ID != fw.FrameworkID || f.Name != "wordcount" || f.Principal != "alice" || f.Role != "eng" ||
		!f.Connected || f.DisconnectedAt != nil || f.FailoverTimeout != 60 {
		t.Errorf("framework: got %+v, want %s (wordcount, alice, eng, connected, 60s failover)", f, fw.FrameworkID)
	}
	if len(st.Tasks) != 0 {
		t.Errorf("tasks: got %d, want 0", len(st.Tasks))
	}
	o := st.Offers[0]
	if len(st.Offers) != 1 || o.FrameworkID != fw.FrameworkID || o.AgentID != agent.AgentID || o.Kind != "fair" ||
		o.Resources.Scalars["cpus"] != 4000 || o.Expires == nil {
		t.Errorf("offers: got %+v, want one fair offer of the whole agent to %s", st.Offers, fw.FrameworkID)
	}
	i := slices.IndexFunc(st.Roles, func(r api.Role) bool { return r.Path == "eng" })
	if i < 0 {
		t.Fatalf("roles: got %+v, want eng", st.Roles)
	}
	if r := st.Roles[i]; r.Weight != 1 || r.DominantShare != 1 || r.Shares["cpus"] != 1 || r.Allocation.Scalars["mem"] != 8192 {
		t.Errorf("role eng: got %+v, want weight 1 and all of the cluster (in its offer)", r)
	}

	// The shape: every key is present, snake_case.
	httpTestCheckShape(t, raw, i)

	httpTestRequest(t, nc, viaBody, protocol.MsgDeclineRequest, protocol.DeclineRequest{
		FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{o.ID},
	}, nil)

	httpTestCheckMetrics(t, httpTestScrape(t, m))
}

// httpTestWaitOffer polls /v1/state until it lists an outstanding offer,
// and returns it both decoded and as raw JSON.
func httpTestWaitOffer(t *testing.T, base string) (api.State, map[string]any) {
	t.Helper()
	var st api.State
	var raw map[string]any
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		code, _, body := httpTestGet(t, base+"/v1/state")
		if code != http.StatusOK {
			return fmt.Errorf("GET /v1/state: got %d %s, want 200", code, body)
		}
		st, raw = api.State{}, nil
		if err := json.Unmarshal(body, &st); err != nil {
			return err
		}
		if err := json.Unmarshal(body, &raw); err != nil {
			return err
		}
		if len(st.Offers) == 0 {
			return errors.New("no outstanding offer yet")
		}
		return nil
	})
	return st, raw
}

// httpTestCheckShape fails the test unless each object of the /v1/state
// JSON raw (with the role at index role) has exactly the expected keys.
func httpTestCheckShape(t *testing.T, raw map[string]any, role int) {
	t.Helper()
	shapes := []struct {
		name string
		obj  any
		want []string
	}{
		{"state", any(raw), []string{"agents", "completed_frameworks", "frameworks", "leader_http", "leader_id", "offers", "raft_index", "roles", "tasks"}},
		{"agent", raw["agents"].([]any)[0], []string{"attributes", "drain_deadline", "drained", "hostname", "http", "id", "registered_at", "resources", "state"}},
		{"framework", raw["frameworks"].([]any)[0], []string{"completed_tasks", "connected", "disconnected_at", "failover_timeout", "id", "name", "principal", "role", "suppressed", "weight"}},
		{"role", raw["roles"].([]any)[role], []string{"allocation", "dominant_share", "path", "shares", "weight"}},
		{"offer", raw["offers"].([]any)[0], []string{"agent_id", "expires", "framework_id", "id", "kind", "resources"}},
	}
	for _, s := range shapes {
		if got := httpTestKeys(t, s.obj); !slices.Equal(got, s.want) {
			t.Errorf("%s keys: got %v, want %v", s.name, got, s.want)
		}
	}
}

// httpTestCheckMetrics checks the /metrics samples of a master that has
// registered one agent and one framework and declined its one offer.
func httpTestCheckMetrics(t *testing.T, samples map[string]float64) {
	t.Helper()
	for name, atLeast := range map[string]float64{
		"allot_allocation_rounds_total":                               1,
		"allot_allocation_round_seconds_count":                        1,
		"allot_offers_made_total":                                     1,
		"allot_offers_declined_total":                                 1,
		"allot_raft_apply_seconds_count":                              2,
		"allot_is_leader":                                             1,
		`allot_requests_total{code="0",verb="agent.register"}`:        1,
		`allot_requests_total{code="0",verb="framework.subscribe"}`:   1,
		`allot_requests_total{code="0",verb="framework.decline"}`:     1,
		`allot_offers_rescinded_total`:                                0,
		`allot_allocation_round_seconds_bucket{le="+Inf"}`:            1,
		`allot_raft_apply_seconds_bucket{le="+Inf"}`:                  2,
		`allot_requests_total{code="9",verb="framework.decline"}`:     -1, // absent
		`allot_requests_total{code="0",verb="framework.acknowledge"}`: -1, // absent
		`allot_frameworks{connection="connected"}`:                    1,
		`allot_agents{state="active"}`:                                1,
		`allot_offers_outstanding`:                                    0,
	} {
		got, ok := samples[name]
		switch {
		case atLeast < 0 && ok:
			t.Errorf("%s: got %v, want no sample", name, got)
		case atLeast >= 0 && !ok:
			t.Errorf("%s: missing from /metrics", name)
		case ok && got < atLeast:
			t.Errorf("%s: got %v, want at least %v", name, got, atLeast)
		}
	}
	// The state gauges, exactly: one connected framework, one active agent,
	// no task, and the declined offer gone.
	for name, want := range map[string]float64{
		`allot_frameworks{connection="connected"}`:    1,
		`allot_frameworks{connection="disconnected"}`: 0,
		`allot_frameworks_suppressed`:                 0,
		`allot_agents{state="active"}`:                1,
		`allot_offers_outstanding`:                    0,
	} {
		if got := samples[name]; got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
}

// TestMaster_HTTPFollowerRedirects runs two masters, each with its own
// embedded NATS server routed to the other's, and checks that the follower
// answers /v1/leader itself and redirects /v1/state to the leader.
func TestMaster_HTTPFollowerRedirects(t *testing.T) {
	t.Parallel()
	network := raftstore.NewInmemNetwork()
	peers := []Peer{{ID: "m1", Address: "m1"}, {ID: "m2", Address: "m2"}}
	m1 := runHTTPTestMaster(t, httpTestConfig(t, network, "m1", peers, []string{}))
	m2 := runHTTPTestMaster(t, httpTestConfig(t, network, "m2", peers, []string{m1.NATSRouteURL()}))
	leader := httpTestWaitLeader(t, m1, m2)
	follower := m1
	if leader == m1 {
		follower = m2
	}

	// The follower learns the leader's HTTP address from its announcements.
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		info := httpTestLeaderJSON(t, follower)
		want := api.Leader{LeaderID: leader.ID(), LeaderRaftAddr: leader.RaftAddr(), LeaderHTTPAddr: leader.HTTPAddr(),
			SelfID: follower.ID(), IsLeader: false, RaftIndex: info.RaftIndex}
		if info != want {
			return fmt.Errorf("follower GET /v1/leader: got %+v, want %+v", info, want)
		}
		return nil
	})

	code, hdr, body := httpTestGet(t, "http://"+follower.HTTPAddr()+"/v1/state?pretty=1")
	if code != http.StatusTemporaryRedirect {
		t.Fatalf("follower GET /v1/state: got %d %s, want 307", code, body)
	}
	if got, want := hdr.Get("Location"), "http://"+leader.HTTPAddr()+"/v1/state?pretty=1"; got != want {
		t.Errorf("redirect location: got %q, want %q", got, want)
	}
	// A client that follows the redirect gets the leader's state.
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + follower.HTTPAddr() + "/v1/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("followed redirect: got %d, %v, want 200 and a state", resp.StatusCode, err)
	}
	// Health and metrics are the follower's own.
	if code, _, _ := httpTestGet(t, "http://"+follower.HTTPAddr()+"/healthz"); code != http.StatusOK {
		t.Errorf("follower GET /healthz: got %d, want 200", code)
	}
	// allot_is_leader follows leadership, which two masters on a loaded
	// machine may pass between them meanwhile: polled until a scrape of
	// each agrees with who leads.
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if m1.IsLeader() == m2.IsLeader() {
			return errors.New("no single leader right now")
		}
		for _, m := range []*Master{m1, m2} {
			want := 0.0
			if m.IsLeader() {
				want = 1
			}
			if got := httpTestScrape(t, m)["allot_is_leader"]; got != want {
				return fmt.Errorf("%s allot_is_leader: got %v, want %v", m.ID(), got, want)
			}
		}
		return nil
	})
}

// TestMaster_HTTPFollowerUnknownLeaderAddr runs two masters whose NATS
// servers are not routed, so the follower never hears the leader's
// announcements: it knows the leader from Raft but not its HTTP address,
// and answers /v1/state with 503 and a JSON error naming the leader.
func TestMaster_HTTPFollowerUnknownLeaderAddr(t *testing.T) {
	t.Parallel()
	network := raftstore.NewInmemNetwork()
	peers := []Peer{{ID: "m1", Address: "m1"}, {ID: "m2", Address: "m2"}}
	m1 := runHTTPTestMaster(t, httpTestConfig(t, network, "m1", peers, nil))
	m2 := runHTTPTestMaster(t, httpTestConfig(t, network, "m2", peers, nil))
	leader := httpTestWaitLeader(t, m1, m2)
	follower := m1
	if leader == m1 {
		follower = m2
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if info := httpTestLeaderJSON(t, follower); info.LeaderID != leader.ID() || info.LeaderHTTPAddr != "" {
			return fmt.Errorf("follower GET /v1/leader: got %+v, want leader %s without an http address", info, leader.ID())
		}
		return nil
	})
	code, hdr, body := httpTestGet(t, "http://"+follower.HTTPAddr()+"/v1/state")
	var e api.Error
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("follower GET /v1/state: %v in %s", err, body)
	}
	if code != http.StatusServiceUnavailable || hdr.Get("Content-Type") != "application/json" ||
		e.Error == "" || e.LeaderID != leader.ID() {
		t.Errorf("follower GET /v1/state: got %d %s, want 503 with an error naming %s", code, body, leader.ID())
	}
}
