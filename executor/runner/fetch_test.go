//go:build linux

package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// uriSpec is a task that only fetches uris.
func uriSpec(name string, uris ...protocol.URI) Spec {
	return Spec{TaskID: "t", Name: name, Command: protocol.CommandInfo{Value: "true", URIs: uris}}
}

// writeTempFile writes content to a new file outside any sandbox.
func writeTempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestRunner_Prepare_FileURIs(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	tool := writeTempFile(t, "tool", "#!/bin/sh\n")
	data := writeTempFile(t, "data.txt", "data")
	sandbox, err := r.Prepare(context.Background(), uriSpec("files",
		protocol.URI{Value: "file://" + tool, Sha256: strings.ToUpper(sum("#!/bin/sh\n")), Executable: true},
		protocol.URI{Value: data, OutputFile: "in/copy.txt"},
	))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		content string
		mode    os.FileMode
	}{"tool": {"#!/bin/sh\n", 0o755}, "in/copy.txt": {"data", 0o644}} {
		p := filepath.Join(sandbox, name)
		got, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if err != nil || string(got) != want.content || fi.Mode().Perm() != want.mode {
			t.Errorf("%s: got %q %v (%v), want %q %v", name, got, fi.Mode(), err, want.content, want.mode)
		}
	}
	if _, err := os.Lstat(filepath.Join(sandbox, legacyControlDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the staging directory is left (%v)", err)
	}
}

func TestRunner_Prepare_HTTPURI(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/pkg/app.bin" {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte("binary"))
	}))
	defer srv.Close()
	r := newRunner(t, "")
	sandbox, err := r.Prepare(context.Background(), uriSpec("http",
		protocol.URI{Value: srv.URL + "/pkg/app.bin", Sha256: sum("binary")},
		protocol.URI{Value: srv.URL + "/pkg/app.bin?v=2", OutputFile: "bin/app"},
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app.bin", "bin/app"} {
		if got, err := os.ReadFile(filepath.Join(sandbox, name)); err != nil || string(got) != "binary" {
			t.Errorf("%s: got %q, %v", name, got, err)
		}
	}

	_, err = r.Prepare(context.Background(), uriSpec("http-404", protocol.URI{Value: srv.URL + "/missing"}))
	if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404: got %v, want ErrFetch", err)
	}
}

func TestRunner_Prepare_FetchFailures(t *testing.T) {
	t.Parallel()
	data := writeTempFile(t, "data", "data")
	cases := []struct {
		name string
		uri  protocol.URI
		want []string
	}{
		{"sha-mismatch", protocol.URI{Value: data, Sha256: sum("other")}, []string{"sha256 mismatch", sum("other"), sum("data")}},
		{"scheme", protocol.URI{Value: "ftp://example.com/x"}, []string{`unsupported scheme "ftp"`}},
		{"relative", protocol.URI{Value: "some/file"}, []string{"not an absolute path"}},
		{"missing", protocol.URI{Value: "file:///no/such/file"}, []string{"no such file"}},
		{"remote-file", protocol.URI{Value: "file://host/x"}, []string{"remote host"}},
		{"no-name", protocol.URI{Value: "http://127.0.0.1/"}, []string{"set output_file"}},
		{"directory", protocol.URI{Value: filepath.Dir(data), OutputFile: "d"}, []string{"not a regular file"}},
	}
	r := newRunner(t, "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Prepare(context.Background(), uriSpec(tc.name, tc.uri))
			if !errors.Is(err, ErrFetch) || Reason(err) != protocol.ReasonFetchFailed {
				t.Fatalf("got %v, want ErrFetch", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestRunner_Prepare_OutputFileEscapes(t *testing.T) {
	t.Parallel()
	data := writeTempFile(t, "data", "data")
	outside := t.TempDir()
	r := newRunner(t, "")
	for _, out := range []string{"../x", "a/../../x", "/etc/x", ".allot/spec.json", "./.allot/x", "link/x", "dotlink/.allot/x"} {
		t.Run(out, func(t *testing.T) {
			s := uriSpec("escape", protocol.URI{Value: data, OutputFile: out})
			sandbox := filepath.Join(r.workDir, "escape")
			if err := os.MkdirAll(sandbox, 0o755); err != nil {
				t.Fatal(err)
			}
			for link, target := range map[string]string{"link": outside, "dotlink": "."} {
				if err := os.Symlink(target, filepath.Join(sandbox, link)); err != nil && !os.IsExist(err) {
					t.Fatal(err)
				}
			}
			_, err := r.Prepare(context.Background(), s)
			if !errors.Is(err, ErrSandboxEscape) {
				t.Fatalf("got %v, want ErrSandboxEscape", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Fatalf("written outside the sandbox: %v", entries)
			}
		})
	}
	// A symlink that stays inside the sandbox is fine.
	if err := os.Mkdir(filepath.Join(r.workDir, "escape", "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(r.workDir, "escape", "inside")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Prepare(context.Background(), uriSpec("escape", protocol.URI{Value: data, OutputFile: "inside/x"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.workDir, "escape", "real", "x")); err != nil {
		t.Fatal(err)
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{
		nil:                      "",
		errors.New("other"):      "",
		ErrFetch:                 protocol.ReasonFetchFailed,
		ErrSandboxEscape:         protocol.ReasonFetchFailed,
		ErrInvalidSpec:           protocol.ReasonTaskInvalid,
		ErrStart:                 protocol.ReasonCommandFailed,
		errors.Join(ErrStart):    protocol.ReasonCommandFailed,
		context.DeadlineExceeded: "",
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v): got %q, want %q", err, got, want)
		}
	}
}
