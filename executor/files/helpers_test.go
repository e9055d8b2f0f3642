package files

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/allot-project/allot/internal/testlog"
)

const testToken = "s3cret-token"

// fixture is a handler over a fresh temporary root, served by an
// httptest.Server for the length of the test.
type fixture struct {
	t    *testing.T
	root string
	srv  *httptest.Server
}

// newFixture serves a handler over a new root; mod, when not nil, adjusts
// the configuration first.
func newFixture(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	cfg := Config{Root: t.TempDir(), Token: testToken, Logger: testlog.New(t)}
	if mod != nil {
		mod(&cfg)
	}
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{t: t, root: cfg.Root, srv: srv}
}

// write creates the file name (slash-separated, relative to the root) and
// its parent directories, and returns its path on disk.
func (f *fixture) write(name, data string) string {
	f.t.Helper()
	p := filepath.Join(f.root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// request builds a GET of endpoint (e.g. "read") with params and the
// bearer token.
func (f *fixture) request(ctx context.Context, endpoint string, params url.Values) *http.Request {
	f.t.Helper()
	u := f.srv.URL + "/v1/files/" + endpoint + "?" + params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	return req
}

// do sends req and returns the response with its whole body.
func (f *fixture) do(req *http.Request) (*http.Response, []byte) {
	f.t.Helper()
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// get sends an authorized GET of endpoint with params.
func (f *fixture) get(endpoint string, params url.Values) (*http.Response, []byte) {
	f.t.Helper()
	return f.do(f.request(context.Background(), endpoint, params))
}

// getJSON sends an authorized GET, requires a 200 and decodes the body
// into out.
func (f *fixture) getJSON(endpoint string, params url.Values, out any) {
	f.t.Helper()
	resp, body := f.get(endpoint, params)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("GET %s %v: got status %d (%s), want 200", endpoint, params, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		f.t.Fatalf("decode %s: %v", body, err)
	}
}

// wantError checks that a response is a JSON error with status and code.
func wantError(t *testing.T, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("got status %d (%s), want %d", resp.StatusCode, body, status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("got content type %q, want application/json", ct)
	}
	var e ErrorResponse
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("decode error body %s: %v", body, err)
	}
	if e.Code != code || e.Error == "" {
		t.Fatalf("got error %+v, want code %q and a message", e, code)
	}
}

// syncBuffer collects a streamed body for a test to poll.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
