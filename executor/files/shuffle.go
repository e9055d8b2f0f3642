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

// Shuffle orders and paces shuffle transfers: downloads that name a
// coflow. The handler calls Acquire before it serves such a download,
// then the Flow's Pace before each chunk of its body and Sent after it,
// and Done once the download has ended, whatever its outcome.
type Shuffle interface {
	// Acquire waits for the transfer's turn. It fails when ctx ends
	// first, or when the shuffle server stops (ErrShuffleStopped).
	Acquire(ctx context.Context, t Transfer) (Flow, error)
}

// Flow is a transfer the Shuffle let start.
type Flow interface {
	// Pace waits until the next n bytes may be sent: the port's share
	// that is the transfer's. next is the size of the chunk after them
	// (0 for none, or not known), which the Flow may ask for ahead. It
	// fails when ctx ends first or the shuffle server stops.
	Pace(ctx context.Context, n, next int) error
	// Sent reports n more bytes written to the client, as they go.
	Sent(n int64)
	// Done reports the end of the transfer with the bytes sent and
	// whether it completed; exactly once.
	Done(bytes int64, ok bool)
}

// paceChunk is the most body bytes written between two Pace calls: the
// grain at which transfers share a port and report progress.
const paceChunk = 256 << 10

// Transfer is one shuffle download: the framework whose sandbox it reads,
// the coflow it belongs to, and the agent of the task fetching it. A
// download naming no coflow is a Transfer without Coflow or Dst: the
// Shuffle paces it at the port with the transfers the leader did not
// rank, without ordering or reporting it, so that no download escapes the
// port's capacity by naming no coflow.
type Transfer struct {
	Framework, Coflow, Dst string
}

// ErrShuffleStopped is returned by a Shuffle that no longer grants
// transfers (its agent is stopping); the handler answers 503.
var ErrShuffleStopped = errors.New("shuffle server stopped")

// shuffleTransfer returns the transfer a download names, nil for a
// download the shuffle does not see: without a Shuffle, or a HEAD. One
// without a coflow parameter is a Transfer of framework alone. framework
// is the request token's framework ("" for the agent's token).
func (h *handler) shuffleTransfer(r *http.Request, name, framework string) (*Transfer, *apiError) {
	q := r.URL.Query()
	if h.shuffle == nil || r.Method == http.MethodHead {
		return nil, nil
	}
	if !q.Has("coflow") {
		return &Transfer{Framework: framework}, nil
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

// countingWriter writes a shuffle transfer's body in chunks its Flow
// paces, counts the bytes the response carried and tells the Flow as they
// go, and remembers the response's status and whether a write failed, so
// the shuffle learns how much of a transfer reached the client.
type countingWriter struct {
	http.ResponseWriter
	ctx    context.Context
	flow   Flow
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
	written := 0
	for written < len(p) {
		k := min(paceChunk, len(p)-written)
		if err := c.flow.Pace(c.ctx, k, c.nextChunk(k)); err != nil {
			return written, c.fail(err)
		}
		n, err := c.ResponseWriter.Write(p[written : written+k])
		c.sent(int64(n))
		written += n
		if err != nil {
			return written, c.fail(err)
		}
	}
	return written, nil
}

// ReadFrom keeps the server's sendfile path, which http.ServeContent takes
// through io.CopyN, when the underlying writer has one: each chunk is read
// through a limit on the file itself, which the server still recognizes.
func (c *countingWriter) ReadFrom(src io.Reader) (int64, error) {
	rf, ok := c.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{c}, src)
	}
	if c.status == 0 {
		c.status = http.StatusOK
	}
	var total int64
	for {
		chunk, account := limitChunk(src, paceChunk)
		if chunk == nil {
			return total, nil
		}
		if err := c.flow.Pace(c.ctx, int(chunk.N), c.nextChunk(int(chunk.N))); err != nil {
			return total, c.fail(err)
		}
		want := chunk.N
		n, err := rf.ReadFrom(chunk)
		account(n)
		c.sent(n)
		total += n
		if err != nil {
			return total, c.fail(err)
		}
		if n < want {
			return total, nil // the end of src
		}
	}
}

// limitChunk returns a reader of at most n bytes of src, nil when src is
// a limit already reached, and the function that takes what was read of
// the chunk off src's own limit. A chunk of a limited file is a limit on
// the file itself, so that the server's sendfile path still sees a file.
func limitChunk(src io.Reader, n int64) (*io.LimitedReader, func(int64)) {
	if lr, ok := src.(*io.LimitedReader); ok {
		if lr.N <= 0 {
			return nil, nil
		}
		return &io.LimitedReader{R: lr.R, N: min(n, lr.N)}, func(read int64) { lr.N -= read }
	}
	return &io.LimitedReader{R: src, N: n}, func(int64) {}
}

// nextChunk returns the size of the chunk after one of k bytes about to
// go out, by the Content-Length the response announced: 0 after the last
// one, or without an announced length.
func (c *countingWriter) nextChunk(k int) int {
	total, err := strconv.ParseInt(c.Header().Get("Content-Length"), 10, 64)
	if err != nil {
		return 0
	}
	return int(min(paceChunk, max(0, total-c.n-int64(k))))
}

func (c *countingWriter) sent(n int64) {
	if n > 0 {
		c.n += n
		c.flow.Sent(n)
	}
}

func (c *countingWriter) fail(err error) error {
	if c.err == nil {
		c.err = err
	}
	return err
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
