package master

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// uiLink finds the links of a page into the UI.
var uiLink = regexp.MustCompile(`href="(/ui/[^"#]*)`)

// TestMaster_UIPages: every agent, framework, task and role has a page
// that shows its real state, and every link of the overview and of those
// pages into the UI leads to a page (a broken link fails the test). The
// guarantee is what the launched task alone holds, so that it is met
// whether or not a round has offered the rest of the agent again.
func TestMaster_UIPages(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	agent := registerTestAgent(t, nc)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "batch-jobs", Role: "eng/batch"}, inbox.receive)
	launchOnFirstOffer(t, nc, fw.FrameworkID, inbox, agent.AgentID, "t-one")
	if code, body := httpTestPut(t, "http://"+m.HTTPAddr()+"/v1/roles/eng", "op", `{"guarantee": {"cpus": 100}}`); code != http.StatusOK {
		t.Fatalf("PUT role: %d %s", code, body)
	}
	base := "http://" + m.HTTPAddr()
	get := func(path string) string {
		t.Helper()
		code, hdr, body := httpTestGet(t, base+path)
		if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s %s", path, code, hdr.Get("Content-Type"), body)
		}
		return string(body)
	}
	pages := map[string][]string{
		"/ui/agents/" + string(agent.AgentID): {"host-1", "t-one", "cpus 1, mem 1000 MiB", `data-action="drain"`},
		"/ui/frameworks/" + string(fw.FrameworkID): {"batch-jobs", `href="/ui/roles/eng/batch"`, "t-one", `id="why"`,
			`data-action="teardown"`},
		"/ui/frameworks/" + string(fw.FrameworkID) + "/tasks/t-one": {string(agent.AgentID), "host-1",
			"allot tasks logs " + string(fw.FrameworkID) + " t-one", `data-action="kill"`},
		"/ui/roles/eng":       {"cpus 0.1: met", `href="/ui/roles/eng/batch"`},
		"/ui/roles/eng/batch": {"batch-jobs", `href="/ui/frameworks/` + string(fw.FrameworkID) + `"`},
	}
	for path, wants := range pages {
		page := get(path)
		for _, want := range wants {
			if !strings.Contains(page, want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
	}
	// Every link, from the overview on, leads to a page.
	seen := map[string]bool{}
	queue := []string{"/ui/"}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		for _, l := range uiLink.FindAllStringSubmatch(get(path), -1) {
			queue = append(queue, l[1])
		}
	}
	for path := range pages {
		if !seen[path] {
			t.Errorf("no link leads to %s", path)
		}
	}
	// The overview's masters, filter and tasks that ended.
	page := get("/ui/")
	for _, want := range []string{"<h2>Masters</h2>", "<code>m1</code>", "leader"} {
		if !strings.Contains(page, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	if page := get("/ui/?filter=batch-JOBS"); !strings.Contains(page, "batch-jobs") || !strings.Contains(page, "t-one") {
		t.Error("filtered by its framework's name, the overview lost the framework or its task")
	}
	if page := get("/ui/?filter=nothing-like-it"); strings.Contains(page, "batch-jobs") || strings.Contains(page, ">t-one<") ||
		strings.Contains(page, "host-1") {
		t.Error("filtered by nothing on it, the overview still lists the framework, its task or the agent")
	}
	httpTestRequest(t, nc, viaBody, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{
		AgentID: agent.AgentID, Updates: []protocol.StatusUpdate{{UUID: "u-done", Status: protocol.TaskStatus{
			TaskID: "t-one", FrameworkID: fw.FrameworkID, AgentID: agent.AgentID, State: protocol.TaskFinished, UUID: "u-done"}}},
	}, nil)
	page = get("/ui/")
	ended := page[strings.Index(page, "Tasks ended lately"):]
	if !strings.Contains(ended, ">t-one<") || !strings.Contains(ended, "FINISHED") {
		t.Error("the overview does not list the finished task among those ended lately")
	}
	for _, path := range []string{"/ui/agents/ag-NOSUCH", "/ui/frameworks/fw-NOSUCH", "/ui/frameworks/" + string(fw.FrameworkID) + "/tasks/nosuch",
		"/ui/roles/no/such"} {
		if code, _, _ := httpTestGet(t, base+path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
}

// TestMaster_UIPagesPerPrincipal: a principal's pages show its own
// frameworks only; another principal's framework and its tasks are as
// unknown as missing ones, and no page offers a tenant an action.
func TestMaster_UIPagesPerPrincipal(t *testing.T) {
	t.Parallel()
	m, alice, bob := viewerTestMaster(t)
	for _, path := range []string{"/ui/frameworks/" + string(bob), "/ui/frameworks/" + string(bob) + "/tasks/t1"} {
		if code, body := getAs(t, m, path, "alice", "a-secret", ""); code != http.StatusNotFound {
			t.Errorf("alice GET %s: %d %s, want 404", path, code, body)
		}
	}
	code, body := getAs(t, m, "/ui/frameworks/"+string(alice), "alice", "a-secret", "")
	if code != http.StatusOK || strings.Contains(string(body), "data-action") {
		t.Errorf("alice's own framework page: %d, actions shown %v", code, strings.Contains(string(body), "data-action"))
	}
	code, body = getAs(t, m, "/ui/roles/eng", "alice", "a-secret", "")
	if code != http.StatusOK || !strings.Contains(string(body), string(alice)) || strings.Contains(string(body), string(bob)) {
		t.Errorf("alice's role page: %d; shows alice %v, bob %v", code, strings.Contains(string(body), string(alice)), strings.Contains(string(body), string(bob)))
	}
	if code, body := getAs(t, m, "/ui/", "alice", "a-secret", ""); code != http.StatusOK || strings.Contains(string(body), "Masters") {
		t.Errorf("alice's overview: %d; shows the masters %v", code, strings.Contains(string(body), "Masters"))
	}
	if code, _ := getAs(t, m, "/ui/roles/eng", "", "", ""); code != http.StatusUnauthorized {
		t.Errorf("a role page without credentials: %d, want 401", code)
	}
	code, body = getAs(t, m, "/ui/roles/eng", "", "", "op")
	if code != http.StatusOK || !strings.Contains(string(body), string(bob)) {
		t.Errorf("the operator's role page: %d, shows bob %v", code, strings.Contains(string(body), string(bob)))
	}
}

// TestUIRolePage_shortAndStarving: a role below its guarantee says by how
// much, and one that asks and holds nothing says it starves.
func TestUIRolePage_shortAndStarving(t *testing.T) {
	t.Parallel()
	g := protocol.Scalars(map[string]int64{"cpus": 2000, "mem": 1024})
	role := api.Role{Path: "eng/prod", Guarantee: &g, Allocation: protocol.Scalars(map[string]int64{"cpus": 500, "mem": 4096})}
	short := shortOfGuarantee(role)
	if short.Scalar("cpus") != 1500 || short.Scalar("mem") != 0 {
		t.Fatalf("short of %s, want cpus 1.5 only", api.FormatResources(short))
	}
	var b strings.Builder
	if err := uiTemplate.ExecuteTemplate(&b, "role", uiRolePage{Role: role, Short: short, Demanding: true, Starving: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"short of cpus 1.5", "starving"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the role page lacks %q", want)
		}
	}
}

// TestRoleFairShares: a role's fair share is its frameworks' and those of
// the roles below it; a framework without a share adds nothing.
func TestRoleFairShares(t *testing.T) {
	t.Parallel()
	cpus := func(n int64) protocol.Resources { return protocol.Scalars(map[string]int64{"cpus": n}) }
	got := roleFairShares(map[protocol.FrameworkID]protocol.Resources{"fw-a": cpus(3000), "fw-b": cpus(1000), "fw-c": cpus(500)},
		map[protocol.FrameworkID]string{"fw-a": "eng/prod", "fw-b": "eng/batch", "fw-c": "eng/batch", "fw-d": "ops"})
	for role, want := range map[string]int64{"eng": 4500, "eng/prod": 3000, "eng/batch": 1500, "ops": 0} {
		if r, ok := got[role]; !ok || r.Scalar("cpus") != want {
			t.Errorf("fair share of %s: %s (listed %v), want cpus %d", role, api.FormatResources(r), ok, want)
		}
	}
	var b strings.Builder
	if err := uiTemplate.ExecuteTemplate(&b, "role", uiRolePage{Role: api.Role{Path: "eng"}, Fair: got["eng"]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "cpus 4.5") {
		t.Error("the role page lacks its fair share")
	}
}
