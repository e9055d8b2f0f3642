package files

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// Shuffle orders shuffle transfers: downloads that name a coflow. The
// handler calls Acquire before it serves such a download and the done
// function it returns once the download has ended, whatever its outcome.
type Shuffle interface {
	// Acquire waits for the transfer's turn. It fails when ctx ends
	// first, or when the shuffle server stops (ErrShuffleStopped); done
	// reports the end of the transfer with the bytes sent and whether it
	// completed, and must be called exactly once after a nil error.
	Acquire(ctx context.Context, t Transfer) (done func(bytes int64, ok bool), err error)
}

// Transfer is one shuffle download: the framework whose sandbox it reads,
// the coflow it belongs to, and the agent of the task fetching it.
type Transfer struct {
	Framework, Coflow, Dst string
}

// ErrShuffleStopped is returned by a Shuffle that no longer grants
// transfers (its agent is stopping); the handler answers 503.
var ErrShuffleStopped = errors.New("shuffle server stopped")

// shuffleTransfer returns the transfer a download names, nil for a
// download the shuffle does not order: without a Shuffle, a HEAD, or a
// request without a coflow parameter. framework is the request token's
// framework ("" for the agent's token).
func (h *handler) shuffleTransfer(r *http.Request, name, framework string) (*Transfer, *apiError) {
	q := r.URL.Query()
	if h.shuffle == nil || r.Method == http.MethodHead || !q.Has("coflow") {
		return nil, nil
	}
	t := Transfer{Framework: framework, Coflow: q.Get("coflow"), Dst: q.Get("dst")}
	if !protocol.ValidID(t.Coflow) {
		return nil, badRequest("coflow %q is not a valid id", truncateParam(t.Coflow))
	}
	if t.Dst == "" {
		return nil, badRequest("a download naming a coflow needs the dst parameter")
	}
	if !protocol.ValidID(t.Dst) {
		return nil, badRequest("dst %q is not a valid id", truncateParam(t.Dst))
	}
	if t.Framework == "" {
		t.Framework = frameworkOfSandbox(name)
	}
	if !protocol.ValidID(t.Framework) {
		return nil, badRequest("the path names no framework's sandbox")
	}
	return &t, nil
}

// frameworkOfSandbox reads the framework from the sandbox name,
// "<framework>_<task>" (see inScope). A framework token names the
// framework exactly and is preferred: this guess is wrong for a framework
// ID holding "_".
func frameworkOfSandbox(name string) string {
	first, _, _ := strings.Cut(filepath.ToSlash(name), "/")
	fw, _, ok := strings.Cut(first, "_")
	if !ok {
		return ""
	}
	return fw
}

// truncateParam keeps error messages short when a parameter is huge.
func truncateParam(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// countingWriter counts the body bytes a response carried and remembers
// its status and whether a write failed, so the shuffle learns how much
// of a transfer reached the client.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
	err    error
}

func (c *countingWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// ReadFrom keeps the server's sendfile path, which http.ServeContent takes
// through io.CopyN, when the underlying writer has one.
func (c *countingWriter) ReadFrom(src io.Reader) (int64, error) {
	rf, ok := c.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{c}, src)
	}
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := rf.ReadFrom(src)
	c.n += n
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// complete reports whether the response succeeded and carried its whole
// body: the Content-Length it announced, when it announced one.
func (c *countingWriter) complete() bool {
	if c.err != nil || c.status == 0 || c.status >= http.StatusBadRequest {
		return false
	}
	if cl := c.Header().Get("Content-Length"); cl != "" {
		want, err := strconv.ParseInt(cl, 10, 64)
		return err == nil && c.n == want
	}
	return true
}
