package master

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestHTTP_Jobs: the jobs a principal's runner recorded in its store are
// shown to that principal and the operator, in the API and the web UI; to
// another principal they do not exist, whatever path it asks for.
func TestHTTP_Jobs(t *testing.T) {
	m, _, _ := viewerTestMaster(t)
	nc, _ := principalConn(t, m, "alice", "a-secret")
	put := func(key string, v any) {
		data, ok := v.([]byte)
		if !ok {
			var err error
			if data, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := callAs(t, nc, "alice", protocol.StoreRequest{Op: protocol.StorePut, Key: key, Value: data}, nil); err != nil {
			t.Fatal(err)
		}
	}
	src := "job \"web\" {\n  group \"g\" {\n    task \"t\" {\n      command = \"<serve>\"\n    }\n  }\n}\n"
	put(jobs.VersionKey("web", 2), []byte(src))
	put(jobs.SpecKey("web"), jobs.SpecRecord{Version: 2, Versions: []int{1, 2}})
	put(jobs.StatusKey("web"), jobs.StatusRecord{Version: 2, State: jobs.JobRunning, StableVersion: 1, Message: "updating"})
	put(jobs.LiveKey("web"), jobs.LiveRecord{Instances: []jobs.LiveInstance{{ID: "web.g.0.v2.0", State: jobs.InstanceRunning, Healthy: true, Agent: "ag-1"}}})

	var list []api.Job
	for _, who := range []struct{ user, secret, bearer string }{{"alice", "a-secret", ""}, {"", "", "op"}} {
		code, body := getAs(t, m, "/v1/jobs", who.user, who.secret, who.bearer)
		if code != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list) != 1 {
			t.Fatalf("GET /v1/jobs as %q: %d %s", who.user+who.bearer, code, body)
		}
		j := list[0]
		if j.Principal != "alice" || j.Name != "web" || j.Version != 2 || j.State != "running" || j.StableVersion != 1 ||
			len(j.Instances) != 1 || j.Instances[0].Agent != "ag-1" || j.Source != "" {
			t.Errorf("job as %q: %+v", who.user+who.bearer, j)
		}
	}
	code, body := getAs(t, m, "/v1/jobs/alice/web", "alice", "a-secret", "")
	var j api.Job
	if code != http.StatusOK || json.Unmarshal(body, &j) != nil || j.Source != src {
		t.Fatalf("GET /v1/jobs/alice/web: %d %s", code, body)
	}
	code, body = getAs(t, m, "/ui/jobs/alice/web", "alice", "a-secret", "")
	if code != http.StatusOK || !strings.Contains(string(body), "web.g.0.v2.0") || !strings.Contains(string(body), "&lt;serve&gt;") {
		t.Fatalf("GET /ui/jobs/alice/web: %d %s", code, body)
	}
	if code, body = getAs(t, m, "/ui/jobs", "", "", "op"); code != http.StatusOK || !strings.Contains(string(body), `href="/ui/jobs/alice/web"`) {
		t.Fatalf("GET /ui/jobs: %d %s", code, body)
	}

	// Bob: no job of alice's, by list or by path.
	if code, body = getAs(t, m, "/v1/jobs", "bob", "b-secret", ""); code != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("bob's GET /v1/jobs: %d %s", code, body)
	}
	for _, path := range []string{"/v1/jobs/alice/web", "/ui/jobs/alice/web", "/v1/jobs/bob/web", "/v1/jobs/alice/..%2Fweb"} {
		if code, body = getAs(t, m, path, "bob", "b-secret", ""); code != http.StatusNotFound || strings.Contains(string(body), "serve") {
			t.Errorf("bob's GET %s: %d %s", path, code, body)
		}
	}
	if code, _ = getAs(t, m, "/v1/jobs", "", "", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/jobs without a credential: %d", code)
	}
	if code, body = getAs(t, m, "/ui/jobs", "bob", "b-secret", ""); code != http.StatusOK || strings.Contains(string(body), "web") {
		t.Errorf("bob's GET /ui/jobs: %d %s", code, body)
	}
}
