package master

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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
