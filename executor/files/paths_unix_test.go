//go:build unix

package files

import (
	"net/http"
	"net/url"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO in a sandbox is refused without blocking on its open.
func TestHandler_RefusesFIFO(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "x")
	if err := syscall.Mkfifo(filepath.Join(f.root, "sb", "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, endpoint := range []string{"read", "download", "tail"} {
		resp, body := f.get(endpoint, url.Values{"path": {"sb/pipe"}})
		wantError(t, resp, body, http.StatusBadRequest, CodeBadRequest)
	}
}
