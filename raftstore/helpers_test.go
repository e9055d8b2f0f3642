package raftstore

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/internal/testutil"
)

// waitFor polls cond every few milliseconds until it returns nil, and fails the test
// with cond's last error if that has not happened within total.
func waitFor(t testing.TB, total time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %s: %v", total, err)
		}
		<-tick.C
	}
}

// testWriter sends log lines to t.Log until the test is over, then drops them (raft
// goroutines may still log while they wind down).
type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

// testLogger returns a logger that writes through t.Log: output shows only for failing
// tests or under -v. RAFTSTORE_LOG sets the level (default info; debug under -v).
func testLogger(t testing.TB, name string) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	level := hclog.Info
	if testing.Verbose() {
		level = hclog.Debug
	}
	if s := os.Getenv("RAFTSTORE_LOG"); s != "" {
		level = hclog.LevelFromString(s)
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, Output: w})
}

// freeAddrs returns n loopback addresses with ports that were free a moment ago.
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	var addrs []string
	for _, p := range testutil.FreePorts(t, n) {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	return addrs
}

func tempDirs(t testing.TB, n int) []string {
	base := t.TempDir()
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(base, fmt.Sprintf("n%d", i+1))
	}
	return dirs
}
