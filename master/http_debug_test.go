package master

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTP_Debug: the runtime's profiles are not served unless the master
// was started with EnableDebug, and then not to a caller without the
// operator token, however it asks.
func TestHTTP_Debug(t *testing.T) {
	t.Parallel()
	get := func(m *Master, path string, auth func(*http.Request)) (int, string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if auth != nil {
			auth(req)
		}
		w := httptest.NewRecorder()
		m.httpHandler().ServeHTTP(w, req)
		body, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(body)
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	creds := map[string]string{"tenant": "s3cret"}

	off := &Master{cfg: Config{OperatorToken: "op", Credentials: creds}, metrics: newMetrics(func() bool { return false })}
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline"} {
		if code, _ := get(off, p, bearer("op")); code != http.StatusNotFound {
			t.Errorf("without EnableDebug, GET %s with the operator token: %d, want 404", p, code)
		}
	}

	on := &Master{cfg: Config{EnableDebug: true, OperatorToken: "op", Credentials: creds}, metrics: newMetrics(func() bool { return false })}
	tenantBasic := func(r *http.Request) { r.SetBasicAuth("tenant", "s3cret") }
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=2", "/debug/pprof/cmdline",
		"/debug/pprof/symbol", "/debug/pprof/profile?seconds=1", "/debug/pprof/trace?seconds=1"} {
		for name, auth := range map[string]func(*http.Request){"no token": nil, "wrong token": bearer("opp"),
			"a tenant's secret": bearer("s3cret"), "a tenant's basic auth": tenantBasic} {
			if code, body := get(on, p, auth); code != http.StatusUnauthorized || strings.Contains(body, "goroutine") {
				t.Errorf("GET %s with %s: %d, want 401 and no profile", p, name, code)
			}
		}
	}
	code, body := get(on, "/debug/pprof/goroutine?debug=1", bearer("op"))
	if code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Fatalf("goroutine profile with the operator token: %d %.200q", code, body)
	}
	if code, body := get(on, "/debug/pprof/heap", bearer("op")); code != http.StatusOK || len(body) == 0 {
		t.Fatalf("heap profile with the operator token: %d, %d bytes", code, len(body))
	}
}
