package files

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A framework token reads its own framework's sandboxes and nothing else;
// a token under another secret, or with a forged framework, is refused.
func TestFrameworkToken_Scope(t *testing.T) {
	const secret = "cluster-secret"
	f := newFixture(t, func(c *Config) { c.Secret = secret })
	f.write("fw-a_map-1/part-0", "apple 1\n")
	f.write("fw-b_map-1/part-0", "pear 1\n")
	f.write("fw-ab_map-1/part-0", "plum 1\n")

	get := func(token, endpoint, path string) (*http.Response, []byte) {
		t.Helper()
		req := f.request(context.Background(), endpoint, url.Values{"path": {path}})
		req.Header.Set("Authorization", "Bearer "+token)
		return f.do(req)
	}
	a := FrameworkToken(secret, "fw-a", time.Now().Add(time.Hour))

	resp, body := get(a, "download", "fw-a_map-1/part-0")
	if resp.StatusCode != http.StatusOK || string(body) != "apple 1\n" {
		t.Fatalf("own sandbox: got %d %q, want 200 and the file", resp.StatusCode, body)
	}
	// The query parameter works as well as the header.
	q := f.request(context.Background(), "download", url.Values{"path": {"fw-a_map-1/part-0"}, "token": {a}})
	q.Header.Del("Authorization")
	if resp, body := f.do(q); resp.StatusCode != http.StatusOK {
		t.Fatalf("token as query parameter: got %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"fw-b_map-1/part-0", "fw-ab_map-1/part-0", ".", "fw-a_map-1/../fw-b_map-1/part-0"} {
		resp, body := get(a, "download", path)
		wantError(t, resp, body, http.StatusForbidden, CodeForbidden)
	}
	resp, body = get(a, "list", ".")
	wantError(t, resp, body, http.StatusForbidden, CodeForbidden)

	for name, token := range map[string]string{
		"other secret":       FrameworkToken("another-secret", "fw-a", time.Now().Add(time.Hour)),
		"forged framework":   "fw:fw-b:" + a[len("fw:fw-a:"):],
		"no mac":             "fw:fw-a:",
		"no framework":       "fw::" + a[len("fw:fw-a:"):],
		"agent token prefix": testToken + "x",
	} {
		resp, body := get(token, "download", "fw-a_map-1/part-0")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: got %d (%s), want 401", name, resp.StatusCode, body)
		}
	}
	// The agent's own token still reads everything.
	resp, body = f.get("download", url.Values{"path": {"fw-b_map-1/part-0"}})
	if resp.StatusCode != http.StatusOK || string(body) != "pear 1\n" {
		t.Fatalf("agent token: got %d %q", resp.StatusCode, body)
	}
}

// Without a secret, no framework token is accepted.
func TestFrameworkToken_NoSecret(t *testing.T) {
	f := newFixture(t, nil)
	f.write("fw-a_t/x", "x")
	req := f.request(context.Background(), "download", url.Values{"path": {"fw-a_t/x"}})
	req.Header.Set("Authorization", "Bearer "+FrameworkToken("", "fw-a", time.Now().Add(time.Hour)))
	if resp, body := f.do(req); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %d (%s), want 401", resp.StatusCode, body)
	}
}

// A framework token follows no symbolic link out of the sandbox the path
// names, even into another sandbox under the root: tasks make links in
// their sandboxes, and one into another framework's would read its files.
// The agent's token still follows links that stay under the root.
func TestFrameworkToken_LinksStayInTheSandbox(t *testing.T) {
	const secret = "cluster-secret"
	f := newFixture(t, func(c *Config) { c.Secret = secret })
	f.write("fw-a_t/own", "mine\n")
	f.write("fw-b_t/secret", "not yours\n")
	for link, target := range map[string]string{"fw-a_t/other": "../fw-b_t/secret", "fw-a_t/inside": "own"} {
		if err := os.Symlink(target, filepath.Join(f.root, link)); err != nil {
			t.Fatal(err)
		}
	}
	a := FrameworkToken(secret, "fw-a", time.Now().Add(time.Hour))
	get := func(token, path string) (*http.Response, []byte) {
		t.Helper()
		req := f.request(context.Background(), "download", url.Values{"path": {path}})
		req.Header.Set("Authorization", "Bearer "+token)
		return f.do(req)
	}
	if resp, body := get(a, "fw-a_t/inside"); resp.StatusCode != http.StatusOK || string(body) != "mine\n" {
		t.Fatalf("link inside the sandbox: got %d %q", resp.StatusCode, body)
	}
	resp, body := get(a, "fw-a_t/other")
	wantError(t, resp, body, http.StatusForbidden, CodePathEscape)
	var entries []Entry
	req := f.request(context.Background(), "list", url.Values{"path": {"fw-a_t"}})
	req.Header.Set("Authorization", "Bearer "+a)
	if resp, body := f.do(req); resp.StatusCode != http.StatusOK || json.Unmarshal(body, &entries) != nil || len(entries) != 3 {
		t.Fatalf("list of the own sandbox: got %d %s", resp.StatusCode, body)
	}
	if resp, body := get(testToken, "fw-a_t/other"); resp.StatusCode != http.StatusOK || string(body) != "not yours\n" {
		t.Fatalf("agent token: got %d %q", resp.StatusCode, body)
	}
}
