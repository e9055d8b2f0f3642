package files

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

func TestSandboxPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw  string
		want string // "" when refused
		code string
	}{
		{"sb/stdout", "sb/stdout", ""},
		{"./sb//stdout", "sb/stdout", ""},
		{"sb/tmp/../stdout", "sb/stdout", ""},
		{".", ".", ""},
		{"sb/", "sb", ""},
		{"", "", CodeBadRequest},
		{"sb/\x00", "", CodeBadRequest},
		{"/etc/passwd", "", CodePathEscape},
		{"//etc/passwd", "", CodePathEscape},
		{"..", "", CodePathEscape},
		{"../other/stdout", "", CodePathEscape},
		{"sb/../../stdout", "", CodePathEscape},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			t.Parallel()
			got, e := sandboxPath(tc.raw)
			switch {
			case tc.code == "" && (e != nil || got != filepath.FromSlash(tc.want)):
				t.Fatalf("got %q, %v; want %q", got, e, tc.want)
			case tc.code != "" && (e == nil || e.code != tc.code):
				t.Fatalf("got %q, %v; want code %s", got, e, tc.code)
			}
		})
	}
}

// TestHandler_PathConfinement asks every file endpoint for paths that must
// be refused or not found, including symbolic links out of the root.
func TestHandler_PathConfinement(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, nil)
	f.write("sb/stdout", "hello\n")
	rel, err := filepath.Rel(filepath.Join(f.root, "sb"), secret)
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"sb/abs-out":  secret,                        // absolute, outside
		"sb/rel-out":  rel,                           // relative, climbs out
		"sb/dir-out":  outside,                       // a directory outside
		"sb/abs-in":   filepath.Join(f.root, "sb/x"), // absolute links are refused even inside
		"sb/gone-out": "../../nowhere",               // dangling, outside
	} {
		if err := os.Symlink(target, filepath.Join(f.root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, path string
		status     int
		code       string
	}{
		{"dot-dot", "../" + filepath.Base(outside) + "/secret", http.StatusForbidden, CodePathEscape},
		{"dot-dot after a name", "sb/../../secret", http.StatusForbidden, CodePathEscape},
		{"absolute", secret, http.StatusForbidden, CodePathEscape},
		{"absolute symlink out", "sb/abs-out", http.StatusForbidden, CodePathEscape},
		{"relative symlink out", "sb/rel-out", http.StatusForbidden, CodePathEscape},
		{"through a symlinked directory", "sb/dir-out/secret", http.StatusForbidden, CodePathEscape},
		{"absolute symlink in", "sb/abs-in", http.StatusForbidden, CodePathEscape},
		{"dangling symlink out", "sb/gone-out", http.StatusForbidden, CodePathEscape},
		{"unknown file", "sb/nope", http.StatusNotFound, CodeNotFound},
		{"unknown sandbox", "nope/stdout", http.StatusNotFound, CodeNotFound},
		{"under a file", "sb/stdout/x", http.StatusNotFound, CodeNotFound},
		{"missing path", "", http.StatusBadRequest, CodeBadRequest},
	}
	for _, endpoint := range []string{"read", "download", "tail", "list"} {
		for _, tc := range cases {
			t.Run(endpoint+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				resp, body := f.get(endpoint, url.Values{"path": {tc.path}})
				wantError(t, resp, body, tc.status, tc.code)
			})
		}
	}
}

func TestHandler_FollowsSymlinkInsideRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/logs/stdout", "inside\n")
	if err := os.Symlink("logs/stdout", filepath.Join(f.root, "sb", "latest")); err != nil {
		t.Fatal(err)
	}
	var got ReadResponse
	f.getJSON("read", url.Values{"path": {"sb/latest"}}, &got)
	if got.Data != "inside\n" {
		t.Fatalf("got %+v, want the linked file's data", got)
	}
}

func TestHandler_FileEndpointsRefuseDirectories(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "x")
	for _, endpoint := range []string{"read", "download", "tail"} {
		resp, body := f.get(endpoint, url.Values{"path": {"sb"}})
		wantError(t, resp, body, http.StatusBadRequest, CodeBadRequest)
	}
}
