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
		`href="/ui/frameworks/` + string(fw.FrameworkID) + `#why"`,
		"<code>shuffle-7</code></td><td>thin</td>", "<td>1 of 1</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("a framework's name reached the page unescaped")
	}
	// The operator's actions: teardown per framework, drain (with a
	// deadline) per agent, and the script that posts them.
	for _, want := range []string{
		`data-action="teardown" data-fw="` + string(fw.FrameworkID) + `"`,
		`data-action="drain" data-agent="` + string(agent.AgentID) + `"`,
		`id="deadline-` + string(agent.AgentID) + `"`,
		`<script src="/ui/ui.js" defer></script>`, `id="action-status"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy %q does not let the page run its own script and call its API", csp)
	}
	code, hdr, body = httpTestGet(t, "http://"+m.HTTPAddr()+"/ui/ui.js")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/javascript") {
		t.Fatalf("GET /ui/ui.js: %d %s", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{`"Bearer " + token`, "sessionStorage", "window.prompt", "/teardown", "/kill", "/drain", "/activate"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("ui.js lacks %q", want)
		}
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

// The operator sees a Kill button per live task, a drained agent and a
// drain's deadline; other viewers see no action at all.
func TestUITemplate_operatorActions(t *testing.T) {
	t.Parallel()
	deadline := "2026-11-27T10:00:00Z"
	p := uiPage{
		Active: []api.Task{{FrameworkID: "fw-1", TaskID: "t1", AgentID: "ag-1"}},
		State: api.State{
			Frameworks: []api.Framework{{ID: "fw-1"}},
			Agents: []api.Agent{{ID: "ag-1", State: "draining", DrainDeadline: &deadline},
				{ID: "ag-2", State: "draining", Drained: true}, {ID: "ag-3", State: "unreachable"}},
		},
	}
	render := func(operator bool) string {
		p.Operator = operator
		var b strings.Builder
		if err := uiTemplate.Execute(&b, p); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	page := render(true)
	for _, want := range []string{
		`data-action="kill" data-fw="fw-1" data-task="t1"`, "tasks killed at " + deadline, ", drained",
		`data-action="activate" data-agent="ag-1"`, `data-action="drain" data-agent="ag-2"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the operator's page lacks %q", want)
		}
	}
	if strings.Contains(page, `data-agent="ag-3"`) {
		t.Error("an unreachable agent can be drained from the page")
	}
	if page := render(false); strings.Contains(page, "data-action") || strings.Contains(page, "action-status") {
		t.Error("a tenant's page shows operator actions")
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
