package master

import (
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestMaster_UI: the web UI renders the agents, the role tree with its
// quota, and the frameworks with names escaped; / redirects to it.
func TestMaster_UI(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	agent := registerTestAgent(t, nc)
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: `<script>alert(1)</script>`, Role: "eng/batch"}, func(*nats.Msg) {})
	if code, body := httpTestPut(t, "http://"+m.HTTPAddr()+"/v1/roles/eng", "op", `{"guarantee": {"cpus": 250}, "offer_constraints": [{"attribute": "rack", "op": "!=", "value": "r9"}]}`); code != http.StatusOK {
		t.Fatalf("PUT role: %d %s", code, body)
	}

	if err := apiTestCall(t, nc, viaBody, protocol.MsgCoflowRegisterRequest,
		protocol.CoflowRegisterRequest{FrameworkID: fw.FrameworkID, CoflowID: "shuffle-7", Flows: []protocol.FlowSpec{{Src: agent.AgentID, Dst: agent.AgentID, Transfers: 4}}}, nil); err != nil {
		t.Fatal(err)
	}

	code, hdr, body := httpTestGet(t, "http://"+m.HTTPAddr()+"/ui/")
	page := string(body)
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /ui/: %d %s", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{
		string(agent.AgentID), "host-1", "cpus 1, mem 1000 MiB",
		string(fw.FrameworkID), "&lt;script&gt;alert(1)&lt;/script&gt;",
		"<code>eng</code>", "<code>eng/batch</code>", "cpus 0.25", "<code>rack != &#34;r9&#34;</code>",
		`href="/v1/frameworks/` + string(fw.FrameworkID) + `/explain"`,
		"<code>shuffle-7</code></td><td>thin</td>", "<td>1 of 1</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("a framework's name reached the page unescaped")
	}

	req, err := http.NewRequest(http.MethodGet, "http://"+m.HTTPAddr()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("GET /: %d to %q, want 302 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// The page shows each running task's health: none, healthy or unhealthy.
func TestUITemplate_health(t *testing.T) {
	yes, no := true, false
	p := uiPage{Active: []api.Task{{TaskID: "t-none"}, {TaskID: "t-yes", Healthy: &yes}, {TaskID: "t-no", Healthy: &no}}}
	var b strings.Builder
	if err := uiTemplate.Execute(&b, p); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<td>healthy</td>", `<span class="bad">unhealthy</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, "healthy"); n != 2 {
		t.Errorf("%d health words on the page, want 2 (one task has no check)", n)
	}
}
