// Package testlog gives tests an hclog.Logger that writes through t.Log, so
// component logs appear only for failing tests (or under -v).
package testlog

import (
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// New returns a logger named after the test that writes through t.Log at
// debug level, or trace level when ALLOT_TEST_TRACE is set.
func New(t testing.TB) hclog.Logger {
	t.Helper()
	level := hclog.Debug
	if testing.Verbose() {
		level = hclog.Trace
	}
	w := &tbWriter{t: t}
	t.Cleanup(w.stop)
	return hclog.New(&hclog.LoggerOptions{
		Name:   t.Name(),
		Level:  level,
		Output: w,
	})
}

// tbWriter forwards log lines to t.Log until the test ends; logging after
// the end (from goroutines still shutting down) is dropped instead of
// panicking the test binary.
type tbWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

var _ io.Writer = (*tbWriter)(nil)

func (w *tbWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *tbWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
