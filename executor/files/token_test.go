package files

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// An expiring framework token reads its framework's sandboxes until it
// expires; an expired one, one whose expiry was changed, or another
// framework's is refused.
func TestFrameworkToken_Expiry(t *testing.T) {
	const secret = "cluster-secret"
	f := newFixture(t, func(c *Config) { c.Secret = secret })
	f.write("fw-a_t/stdout", "hello\n")
	f.write("fw-b_t/stdout", "other\n")
	get := func(token, path string) (*http.Response, []byte) {
		t.Helper()
		req := f.request(context.Background(), "download", url.Values{"path": {path}})
		req.Header.Set("Authorization", "Bearer "+token)
		return f.do(req)
	}
	expires := time.Now().Add(time.Hour)
	fresh := protocol.FrameworkFilesToken(secret, "fw-a", expires)
	if resp, body := get(fresh, "fw-a_t/stdout"); resp.StatusCode != http.StatusOK || string(body) != "hello\n" {
		t.Fatalf("fresh token: got %d %q, want 200 and the file", resp.StatusCode, body)
	}

	expired := protocol.FrameworkFilesToken(secret, "fw-a", time.Now().Add(-time.Second))
	exp := strconv.FormatInt(expires.Unix(), 10)
	later := strconv.FormatInt(expires.Add(24*time.Hour).Unix(), 10)
	for name, token := range map[string]string{
		"expired":        expired,
		"expiry changed": strings.Replace(fresh, ":"+exp+":", ":"+later+":", 1),
		"other secret":   protocol.FrameworkFilesToken("another-secret", "fw-a", expires),
	} {
		if token == fresh {
			t.Fatalf("%s: the token was not changed", name)
		}
		resp, body := get(token, "fw-a_t/stdout")
		wantError(t, resp, body, http.StatusUnauthorized, CodeUnauthorized)
	}

	other := protocol.FrameworkFilesToken(secret, "fw-b", expires)
	resp, body := get(other, "fw-a_t/stdout")
	wantError(t, resp, body, http.StatusForbidden, CodeForbidden)
	if resp, body := get(other, "fw-b_t/stdout"); resp.StatusCode != http.StatusOK || string(body) != "other\n" {
		t.Fatalf("fw-b's token on its own sandbox: got %d %q", resp.StatusCode, body)
	}
}
