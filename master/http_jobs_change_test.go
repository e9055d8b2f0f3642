package master

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

const httpJob = `job "web" {
  group "g" {
    count = 2
    task "t" {
      command = "sleep"
      args    = ["300"]
    }
  }
}
`

// TestHTTP_JobsChange: a principal submits, checks, stops and reverts its
// own jobs over HTTP, as `allot jobs` does through the store, and the
// operator anyone's: the spec, versions and the runner's change mark are
// in the principal's store afterwards, with what each version starts,
// replaces and stops.
func TestHTTP_JobsChange(t *testing.T) {
	t.Parallel()
	m, _, _ := viewerTestMaster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	alice := apiClient(t, m, api.WithPrincipal("alice", "a-secret"))
	ch, err := alice.SubmitJob(ctx, "alice", api.JobSubmit{File: "web.hcl", Source: httpJob, Check: true})
	if err != nil || !ch.Checked || ch.Version != 1 || len(ch.Groups) != 1 || ch.Groups[0] != (api.JobGroupChange{Group: "g", Start: 2}) {
		t.Fatalf("check: %+v %v", ch, err)
	}
	if _, ok := m.View().StoreGet("alice", jobs.SpecKey("web")); ok {
		t.Fatal("a check wrote the job's spec")
	}
	if ch, err = alice.SubmitJob(ctx, "alice", api.JobSubmit{Source: httpJob}); err != nil || ch.Version != 1 || ch.Checked {
		t.Fatalf("submit: %+v %v", ch, err)
	}
	if ch, err = alice.SubmitJob(ctx, "alice", api.JobSubmit{Source: httpJob}); err != nil || !ch.Unchanged || ch.Version != 1 {
		t.Fatalf("the same file again: %+v %v", ch, err)
	}
	v2 := strings.Replace(strings.Replace(httpJob, `"300"`, `"301"`, 1), "count = 2", "count = 3", 1)
	if ch, err = alice.SubmitJob(ctx, "alice", api.JobSubmit{Source: v2}); err != nil || ch.Version != 2 ||
		ch.Groups[0] != (api.JobGroupChange{Group: "g", Replace: 2, Start: 1}) {
		t.Fatalf("version 2: %+v %v", ch, err)
	}
	if spec := specOf(t, m, "alice", "web"); spec.Version != 2 || len(spec.Versions) != 2 {
		t.Fatalf("alice's spec after two versions: %+v", spec)
	}
	if e, ok := m.View().StoreGet("alice", jobs.ChangedKey); !ok || string(e.Value) != "web" {
		t.Errorf("the runner's change mark: %+v %v", e, ok)
	}
	if e, ok := m.View().StoreGet("alice", jobs.VersionKey("web", 2)); !ok || string(e.Value) != v2 {
		t.Errorf("version 2's file: %+v %v", e, ok)
	}

	// The operator reverts alice's job and stops it.
	op := apiClient(t, m, api.WithToken("op"))
	if ch, err = op.RevertJob(ctx, "alice", "web", 1); err != nil || ch.Version != 3 ||
		ch.Groups[0] != (api.JobGroupChange{Group: "g", Replace: 2, Stop: 1}) {
		t.Fatalf("revert: %+v %v", ch, err)
	}
	if e, ok := m.View().StoreGet("alice", jobs.VersionKey("web", 3)); !ok || string(e.Value) != httpJob {
		t.Errorf("version 3 is not version 1's file: %+v %v", e, ok)
	}
	if ch, err = op.StopJob(ctx, "alice", "web"); err != nil || !ch.Stopped {
		t.Fatalf("stop: %+v %v", ch, err)
	}
	if spec := specOf(t, m, "alice", "web"); !spec.Stopped || spec.Version != 3 {
		t.Errorf("after the stop: %+v", spec)
	}
	if _, err = op.RevertJob(ctx, "alice", "web", 9); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Errorf("revert to a version not kept: %v", err)
	}
	if _, err = op.StopJob(ctx, "alice", "nothing"); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Errorf("stop of no job: %v", err)
	}
}

// TestHTTP_JobsChange_refused: what a hostile or careless caller tries
// changes nothing: another principal's jobs, no credential, a principal
// that does not exist, a body that is not JSON (what a page of another
// site could post with a browser's stored credentials), an oversized
// body, unknown fields, and job files the parser refuses (answered with
// the file's position; integration's TestJobs_httpChecksFits has those
// the agents refuse).
func TestHTTP_JobsChange_refused(t *testing.T) {
	t.Parallel()
	m, _, _ := viewerTestMaster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	alice := apiClient(t, m, api.WithPrincipal("alice", "a-secret"))
	if _, err := alice.SubmitJob(ctx, "alice", api.JobSubmit{Source: httpJob}); err != nil {
		t.Fatal(err)
	}
	before := m.View().StoreUsage("alice")
	body := func(v any) []byte {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	submit := body(api.JobSubmit{Source: httpJob})
	for _, tc := range []struct {
		name, path, user, secret, contentType string
		body                                  []byte
		code                                  int
		want                                  string
	}{
		{"bob submits to alice", "/v1/jobs/alice", "bob", "b-secret", "application/json", submit, http.StatusForbidden, "not yours"},
		{"bob stops alice's job", "/v1/jobs/alice/web/stop", "bob", "b-secret", "application/json", []byte("{}"), http.StatusForbidden, "not yours"},
		{"bob reverts alice's job", "/v1/jobs/alice/web/revert", "bob", "b-secret", "application/json", body(api.JobRevert{Version: 1}), http.StatusForbidden, "not yours"},
		{"no credential", "/v1/jobs/alice", "", "", "application/json", submit, http.StatusUnauthorized, ""},
		{"a wrong secret", "/v1/jobs/alice/web/stop", "alice", "guess", "application/json", []byte("{}"), http.StatusUnauthorized, ""},
		{"a form post", "/v1/jobs/alice/web/stop", "alice", "a-secret", "text/plain", []byte("{}"), http.StatusUnsupportedMediaType, "JSON"},
		{"no content type", "/v1/jobs/alice", "alice", "a-secret", "", submit, http.StatusUnsupportedMediaType, "JSON"},
		{"unknown field", "/v1/jobs/alice", "alice", "a-secret", "application/json", []byte(`{"source":"x","run_as":"root"}`), http.StatusBadRequest, "unknown field"},
		{"two values", "/v1/jobs/alice/web/stop", "alice", "a-secret", "application/json", []byte("{}{}"), http.StatusBadRequest, "more than one"},
		{"oversized", "/v1/jobs/alice", "alice", "a-secret", "application/json", body(api.JobSubmit{Source: strings.Repeat("#", maxJobBody)}), http.StatusRequestEntityTooLarge, "over"},
		{"syntax", "/v1/jobs/alice", "alice", "a-secret", "application/json", body(api.JobSubmit{File: "bad.hcl", Source: "job \"a\" {\n  group \"g\" {\n    count = \n  }\n}\n"}), http.StatusBadRequest, "bad.hcl:3:13"},
		{"unknown field in the file", "/v1/jobs/alice", "alice", "a-secret", "application/json", body(api.JobSubmit{Source: "job \"a\" {\n  colour = \"red\"\n}\n"}), http.StatusBadRequest, "job.hcl:2:3"},
		{"a path in the principal", "/v1/jobs/..%2Fbob", "alice", "a-secret", "application/json", submit, http.StatusBadRequest, "not a principal"},
	} {
		req, err := http.NewRequest(http.MethodPost, "http://"+m.HTTPAddr()+tc.path, bytes.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.secret)
		}
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		code, _, got := httpTestDo(t, req)
		if code != tc.code || !strings.Contains(string(got), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, code, got, tc.code, tc.want)
		}
	}
	// The operator, for a principal the masters do not know.
	op := apiClient(t, m, api.WithToken("op"))
	if _, err := op.SubmitJob(ctx, "mallory", api.JobSubmit{Source: httpJob}); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Errorf("a job for an unknown principal: %v", err)
	}
	if after := m.View().StoreUsage("alice"); after != before {
		t.Errorf("alice's store changed: %+v, was %+v", after, before)
	}
	if spec := specOf(t, m, "alice", "web"); spec.Version != 1 || spec.Stopped {
		t.Errorf("alice's job changed: %+v", spec)
	}
	for _, p := range []string{"bob", "mallory"} {
		if u := m.View().StoreUsage(p); u.Keys != 0 {
			t.Errorf("%s's store holds %d keys", p, u.Keys)
		}
	}
}

// specOf is a job's spec record as m's state holds it.
func specOf(t *testing.T, m *Master, principal, name string) jobs.SpecRecord {
	t.Helper()
	var spec jobs.SpecRecord
	e, ok := m.View().StoreGet(principal, jobs.SpecKey(name))
	if !ok {
		t.Fatalf("%s holds no job %s", principal, name)
	}
	if err := json.Unmarshal(e.Value, &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// apiClient is a client of m's HTTP API.
func apiClient(t *testing.T, m *Master, opts ...api.Option) *api.Client {
	t.Helper()
	c, err := api.NewClient([]string{m.HTTPAddr()}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
