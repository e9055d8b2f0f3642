package files

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"valid", Config{Root: "/srv", Token: "t"}, true},
		{"valid with max read", Config{Root: "/srv", Token: "t", MaxRead: 1}, true},
		{"no root", Config{Token: "t"}, false},
		{"no token", Config{Root: "/srv"}, false},
		{"negative max read", Config{Root: "/srv", Token: "t", MaxRead: -1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("got %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want it to wrap ErrConfig", err)
			}
		})
	}
}

func TestNewHandler_RefusesBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  Config
		want error
	}{
		{"empty token", Config{Root: dir}, ErrConfig},
		{"missing root", Config{Root: filepath.Join(dir, "nope"), Token: "t"}, fs.ErrNotExist},
		{"root is a file", Config{Root: file, Token: "t"}, ErrConfig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := NewHandler(tc.cfg)
			if !errors.Is(err, tc.want) || h != nil {
				t.Fatalf("got %v, %v; want nil, an error wrapping %v", h, err, tc.want)
			}
		})
	}
}

func TestHandler_Auth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "hello\n")
	cases := []struct {
		name   string
		header string // Authorization
		query  string // token parameter
		status int
	}{
		{"missing", "", "", http.StatusUnauthorized},
		{"wrong header", "Bearer nope", "", http.StatusUnauthorized},
		{"token as prefix", "Bearer " + testToken[:4], "", http.StatusUnauthorized},
		{"token with suffix", "Bearer " + testToken + "x", "", http.StatusUnauthorized},
		{"other scheme", "Basic " + testToken, "", http.StatusUnauthorized},
		{"wrong query", "", "nope", http.StatusUnauthorized},
		{"wrong header, right query", "Bearer nope", testToken, http.StatusUnauthorized},
		{"header", "Bearer " + testToken, "", http.StatusOK},
		{"lower-case scheme", "bearer " + testToken, "", http.StatusOK},
		{"query", "", testToken, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			params := url.Values{"path": {"sb/stdout"}, "offset": {"-1"}}
			if tc.query != "" {
				params.Set("token", tc.query)
			}
			req := f.request(context.Background(), "read", params)
			req.Header.Del("Authorization")
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, body := f.do(req)
			if tc.status == http.StatusOK {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("got status %d (%s), want 200", resp.StatusCode, body)
				}
				return
			}
			wantError(t, resp, body, tc.status, CodeUnauthorized)
			if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Fatalf("got WWW-Authenticate %q, want a Bearer challenge", got)
			}
		})
	}
}

func TestHandler_UnauthorizedBeforeRouting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	req := f.request(context.Background(), "nowhere", nil)
	req.Header.Del("Authorization")
	resp, body := f.do(req)
	wantError(t, resp, body, http.StatusUnauthorized, CodeUnauthorized)
}

func TestHandler_UnknownEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	resp, body := f.get("nowhere", nil)
	wantError(t, resp, body, http.StatusNotFound, CodeNotFound)
}

func TestHandler_WrongMethod(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "x")
	cases := []struct {
		method, endpoint, allow string
	}{
		{http.MethodPost, "read", "GET"},
		{http.MethodDelete, "list", "GET"},
		{http.MethodHead, "tail", "GET"},
		{http.MethodPut, "download", "GET, HEAD"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.endpoint, func(t *testing.T) {
			t.Parallel()
			req := f.request(context.Background(), tc.endpoint, url.Values{"path": {"sb/stdout"}})
			req.Method = tc.method
			resp, body := f.do(req)
			if got := resp.Header.Get("Allow"); got != tc.allow {
				t.Fatalf("got Allow %q, want %q", got, tc.allow)
			}
			if tc.method == http.MethodHead {
				if resp.StatusCode != http.StatusMethodNotAllowed {
					t.Fatalf("got status %d, want 405", resp.StatusCode)
				}
				return // no body to check
			}
			wantError(t, resp, body, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
		})
	}
}
