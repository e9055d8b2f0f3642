package master

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// httpTestConfig is a master on an in-memory Raft network with short
// timeouts, an embedded NATS server on a free port (no route listener
// unless routes is non-nil) and the HTTP API on a free loopback port.
func httpTestConfig(t testing.TB, network *raftstore.InmemNetwork, id string, peers []Peer, routes []string) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Logger = testlog.New(t).Named(id)
	cfg.Raft.NodeID = id
	cfg.Raft.InMemory = true
	cfg.Raft.Network = network
	cfg.Raft.Bootstrap = true
	cfg.Raft.Peers = peers
	cfg.Raft.HeartbeatTimeout = 50 * time.Millisecond
	cfg.Raft.ElectionTimeout = 50 * time.Millisecond
	cfg.Raft.LeaderLeaseTimeout = 50 * time.Millisecond
	cfg.Raft.CommitTimeout = 5 * time.Millisecond
	cfg.NATS.Host, cfg.NATS.Port = "127.0.0.1", -1
	cfg.NATS.ClusterPort = 0
	if routes != nil {
		cfg.NATS.ClusterHost, cfg.NATS.ClusterPort = "127.0.0.1", -1
		cfg.NATS.Routes = routes
	}
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.AllocationInterval = 20 * time.Millisecond
	cfg.AgentHeartbeat = 50 * time.Millisecond
	cfg.AgentTimeout = time.Minute
	cfg.RequestTimeout = 5 * time.Second
	return cfg
}

// runHTTPTestMaster runs a master until the test ends and waits until it
// is ready; cleanup stops it and checks that Run returned cleanly.
func runHTTPTestMaster(t testing.TB, cfg Config) *Master {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run %s: %v", cfg.Raft.NodeID, err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("run %s: still running 20s after cancel", cfg.Raft.NodeID)
		}
	})
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("run %s: %v", cfg.Raft.NodeID, err)
	case <-time.After(10 * time.Second):
		t.Fatalf("master %s not ready after 10s", cfg.Raft.NodeID)
	}
	return m
}

// apiTestMaster runs one master without the HTTP API until the test ends,
// waits until it leads, and connects a NATS client to it (closed at the
// end). modify, when set, edits the configuration last.
func apiTestMaster(t testing.TB, modify func(*Config)) (*Master, *nats.Conn) {
	t.Helper()
	cfg := httpTestConfig(t, raftstore.NewInmemNetwork(), "m1", nil, nil)
	cfg.HTTPAddr = ""
	if modify != nil {
		modify(&cfg)
	}
	m := runHTTPTestMaster(t, cfg)
	httpTestWaitLeader(t, m)
	// With a master's rights where the server authenticates: the tests
	// play every part.
	nc, err := nats.Connect(m.NATSURL(), cfg.NATS.clientOptions("test")...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return m, nc
}

func httpTestWaitLeader(t testing.TB, masters ...*Master) *Master {
	t.Helper()
	var leader *Master
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, m := range masters {
			if m.IsLeader() {
				leader = m
				return nil
			}
		}
		return errors.New("no master serves as leader")
	})
	return leader
}

// httpGet fetches url without following redirects.
func httpTestGet(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return httpTestDo(t, req)
}

// httpTestDo sends req without following redirects and returns the status,
// the headers and the body.
func httpTestDo(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	client := &http.Client{
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

func httpTestLeaderJSON(t *testing.T, m *Master) api.Leader {
	t.Helper()
	code, _, body := httpTestGet(t, "http://"+m.HTTPAddr()+"/v1/leader")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/leader: got %d %s, want 200", code, body)
	}
	var info api.Leader
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatalf("GET /v1/leader: %v in %s", err, body)
	}
	return info
}

// request sends one API request over NATS and decodes its reply.
func httpTestRequest(t *testing.T, nc *nats.Conn, subject string, typ protocol.MsgType, body, reply any) {
	t.Helper()
	if err := apiTestCall(t, nc, subject, typ, body, reply); err != nil {
		t.Fatalf("reply to %s: %v", subject, err)
	}
}

// viaBody, as a test request's subject, is the subject the body calls
// for: its type's verb, for the framework or agent it names, as the
// principal a subscribe names or the framework subscribed with
// (testPrincipals), anonymous otherwise.
const viaBody = ""

// testPrincipals remembers the principal each framework subscribed with
// through apiTestCall, so that later calls for it go on its subjects.
var testPrincipals sync.Map // protocol.FrameworkID → string

// testPrincipal is the principal a test call acts as.
func testPrincipal(body any) string {
	switch r := body.(type) {
	case protocol.SubscribeRequest:
		return r.Principal
	case protocol.FrameworkCall:
		if p, ok := testPrincipals.Load(r.ForFramework()); ok {
			return p.(string)
		}
	}
	return ""
}

// apiTestCall sends one request and returns the reply's typed error.
func apiTestCall(t testing.TB, nc *nats.Conn, subject string, typ protocol.MsgType, body, reply any) error {
	t.Helper()
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	if subject == viaBody {
		if subject, err = (protocol.Subjects{}).RequestSubject(testPrincipal(body), body); err != nil {
			t.Fatal(err)
		}
	}
	msg, err := nc.Request(subject, data, 5*time.Second)
	if err != nil {
		t.Fatalf("request %s: %v", subject, err)
	}
	err = protocol.DecodeReply(msg.Data, reply)
	if r, ok := reply.(*protocol.SubscribeReply); ok && err == nil {
		if sr, ok := body.(protocol.SubscribeRequest); ok {
			testPrincipals.Store(r.FrameworkID, sr.Principal)
		}
	}
	return err
}

// scrape returns the samples of a Prometheus text exposition, keyed by
// metric name with labels as written (e.g. `x_total{code="0"}`).
func httpTestScrape(t *testing.T, m *Master) map[string]float64 {
	t.Helper()
	code, hdr, body := httpTestGet(t, "http://"+m.HTTPAddr()+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: got %d, want 200", code)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: content type %q, want text/plain", ct)
	}
	return parseMetrics(t, body)
}

// gatherSamples is httpTestScrape for a master without an HTTP listener: it
// asks the metrics handler directly.
func gatherSamples(t *testing.T, m *Master) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.metrics.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics handler: got %d, want 200", rec.Code)
	}
	return parseMetrics(t, rec.Body.Bytes())
}

// parseMetrics reads the Prometheus text format into sample name (with its
// labels) to value.
func parseMetrics(t *testing.T, body []byte) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// keysOf returns the sorted keys of a JSON object.
func httpTestKeys(t *testing.T, v any) []string {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("got %T, want a JSON object", v)
	}
	return slices.Sorted(maps.Keys(obj))
}

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
	shapes := []struct {
		name string
		obj  any
		want []string
	}{
		{"state", any(raw), []string{"agents", "completed_frameworks", "frameworks", "leader_http", "leader_id", "offers", "raft_index", "roles", "tasks"}},
		{"agent", raw["agents"].([]any)[0], []string{"attributes", "drain_deadline", "drained", "hostname", "http", "id", "registered_at", "resources", "state"}},
		{"framework", raw["frameworks"].([]any)[0], []string{"completed_tasks", "connected", "disconnected_at", "failover_timeout", "id", "name", "principal", "role", "suppressed", "weight"}},
		{"role", raw["roles"].([]any)[i], []string{"allocation", "dominant_share", "path", "shares", "weight"}},
		{"offer", raw["offers"].([]any)[0], []string{"agent_id", "expires", "framework_id", "id", "kind", "resources"}},
	}
	for _, s := range shapes {
		if got := httpTestKeys(t, s.obj); !slices.Equal(got, s.want) {
			t.Errorf("%s keys: got %v, want %v", s.name, got, s.want)
		}
	}

	httpTestRequest(t, nc, viaBody, protocol.MsgDeclineRequest, protocol.DeclineRequest{
		FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{o.ID},
	}, nil)

	samples := httpTestScrape(t, m)
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
