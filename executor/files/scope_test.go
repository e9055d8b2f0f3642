package files

import (
	"context"
	"net/http"
	"net/url"
	"testing"
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
	a := FrameworkToken(secret, "fw-a")

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
		"other secret":       FrameworkToken("another-secret", "fw-a"),
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
	req.Header.Set("Authorization", "Bearer "+FrameworkToken("", "fw-a"))
	if resp, body := f.do(req); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %d (%s), want 401", resp.StatusCode, body)
	}
}
