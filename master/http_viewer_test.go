package master

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// viewerTestMaster is a master shared by principals alice and bob, with an
// operator token, and one framework of each.
func viewerTestMaster(t *testing.T) (m *Master, alice, bob protocol.FrameworkID) {
	t.Helper()
	m, _ = apiTestMaster(t, func(c *Config) {
		c.HTTPAddr, c.OperatorToken, c.NATS.MasterSecret = "127.0.0.1:0", "op", "ms"
		c.Credentials = map[string]string{"alice": "a-secret", "bob": "b-secret"}
	})
	for _, p := range []struct {
		name, secret string
		id           *protocol.FrameworkID
	}{{"alice", "a-secret", &alice}, {"bob", "b-secret", &bob}} {
		nc, _ := principalConn(t, m, p.name, p.secret)
		var reply protocol.SubscribeReply
		sub := protocol.SubscribeRequest{Name: p.name, Role: "eng", Principal: p.name, FailoverTimeout: time.Hour}
		if err := callAs(t, nc, p.name, sub, &reply); err != nil {
			t.Fatal(err)
		}
		*p.id = reply.FrameworkID
	}
	return m, alice, bob
}

// getAs GETs path from m as a principal (basic authentication), the
// operator (bearer token), or nobody.
func getAs(t *testing.T, m *Master, path, user, secret, bearer string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+m.HTTPAddr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, secret)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	code, _, body := httpTestDo(t, req)
	return code, body
}

// TestHTTP_ViewsPerPrincipal: with framework credentials, the state, the
// web UI and explanations show a principal only its own frameworks; the
// operator token (bearer, or basic as user operator) shows all; anyone
// else, a wrong secret included, is refused.
func TestHTTP_ViewsPerPrincipal(t *testing.T) {
	t.Parallel()
	m, alice, bob := viewerTestMaster(t)
	frameworks := func(body []byte) map[protocol.FrameworkID]bool {
		var st api.State
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("state: %v: %s", err, body)
		}
		out := map[protocol.FrameworkID]bool{}
		for _, f := range st.Frameworks {
			out[f.ID] = true
		}
		return out
	}
	for name, who := range map[string][3]string{
		"nobody":           {"", "", ""},
		"a wrong secret":   {"alice", "b-secret", ""},
		"an unknown user":  {"carol", "a-secret", ""},
		"a wrong token":    {"", "", "guess"},
		"operator, badly":  {"operator", "guess", ""},
		"token as alice's": {"alice", "op", ""},
	} {
		if code, _ := getAs(t, m, "/v1/state", who[0], who[1], who[2]); code != http.StatusUnauthorized {
			t.Errorf("/v1/state as %s: %d, want 401", name, code)
		}
	}
	code, body := getAs(t, m, "/v1/state", "alice", "a-secret", "")
	if got := frameworks(body); code != http.StatusOK || len(got) != 1 || !got[alice] {
		t.Fatalf("alice's state: %d, frameworks %v, want hers alone", code, got)
	}
	for name, who := range map[string][3]string{"bearer": {"", "", "op"}, "basic": {"operator", "op", ""}} {
		code, body := getAs(t, m, "/v1/state", who[0], who[1], who[2])
		if got := frameworks(body); code != http.StatusOK || len(got) != 2 {
			t.Errorf("the operator's state (%s): %d, frameworks %v, want both", name, code, got)
		}
	}
	if code, body := getAs(t, m, "/ui/", "alice", "a-secret", ""); code != http.StatusOK ||
		!strings.Contains(string(body), string(alice)) || strings.Contains(string(body), string(bob)) {
		t.Fatalf("alice's web UI: %d, want her framework and not bob's", code)
	}
	if code, _ := getAs(t, m, "/v1/frameworks/"+string(bob)+"/explain", "alice", "a-secret", ""); code != http.StatusNotFound {
		t.Fatalf("alice explaining bob's framework: %d, want 404", code)
	}
	if code, _ := getAs(t, m, "/v1/frameworks/"+string(bob)+"/explain", "bob", "b-secret", ""); code != http.StatusOK {
		t.Fatalf("bob explaining his framework: %d, want 200", code)
	}
}

// TestHTTP_EventsPerPrincipal: alice's event stream carries her
// frameworks' events and not bob's, though bob's came first.
func TestHTTP_EventsPerPrincipal(t *testing.T) {
	t.Parallel()
	m, _, _ := viewerTestMaster(t)
	req, err := http.NewRequest(http.MethodGet, "http://"+m.HTTPAddr()+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("alice", "a-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("alice's event stream: %s", resp.Status)
	}
	var ids []protocol.FrameworkID
	for _, p := range []struct{ name, secret string }{{"bob", "b-secret"}, {"alice", "a-secret"}} {
		nc, _ := principalConn(t, m, p.name, p.secret)
		var reply protocol.SubscribeReply
		sub := protocol.SubscribeRequest{Name: p.name + "-2", Role: "eng", Principal: p.name, FailoverTimeout: time.Hour}
		if err := callAs(t, nc, p.name, sub, &reply); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, reply.FrameworkID)
	}
	sc := bufio.NewScanner(resp.Body)
	done := make(chan error, 1)
	go func() {
		for sc.Scan() {
			var ev protocol.ClusterEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Framework == nil {
				continue
			}
			switch ev.Framework.FrameworkID {
			case ids[0]:
				done <- errUnexpected("bob's framework event reached alice")
				return
			case ids[1]:
				done <- nil
				return
			}
		}
		done <- errUnexpected("the stream ended")
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("alice's own framework event did not arrive")
	}
}

type errUnexpected string

func (e errUnexpected) Error() string { return string(e) }

// TestHTTP_ActionsNeedATokenWithTenants: with framework credentials and no
// operator token, the operator actions (and the files tokens) are refused
// to everyone, saying how to configure one: a tenant reaching the API
// could otherwise drain agents or read others' sandboxes.
func TestHTTP_ActionsNeedATokenWithTenants(t *testing.T) {
	t.Parallel()
	m, _ := apiTestMaster(t, func(c *Config) {
		c.HTTPAddr, c.NATS.MasterSecret, c.FilesSecret = "127.0.0.1:0", "ms", "files"
		c.Credentials = map[string]string{"alice": "a-secret"}
	})
	for _, req := range []struct{ method, path string }{
		{http.MethodPost, "/v1/agents/ag-1/drain"}, {http.MethodGet, "/v1/frameworks/fw-1/files-token"},
		{http.MethodGet, "/v1/operator/snapshot"},
	} {
		code, body := httpTestWithToken(t, req.method, "http://"+m.HTTPAddr()+req.path, "")
		if code != http.StatusUnauthorized || !strings.Contains(string(body), "--operator-token") {
			t.Errorf("%s %s: %d %s, want 401 naming --operator-token", req.method, req.path, code, body)
		}
	}
}
