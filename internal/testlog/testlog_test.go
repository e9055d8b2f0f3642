package testlog

import (
	"strings"
	"testing"
)

// fakeTB records what is logged through it.
type fakeTB struct {
	testing.TB
	lines   []string
	cleanup []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Name() string      { return "fake" }
func (f *fakeTB) Log(args ...any)   { f.lines = append(f.lines, args[0].(string)) }
func (f *fakeTB) Cleanup(fn func()) { f.cleanup = append(f.cleanup, fn) }
func (f *fakeTB) runCleanup() {
	for _, fn := range f.cleanup {
		fn()
	}
}

func TestNew_WritesThroughTLogUntilCleanup(t *testing.T) {
	f := &fakeTB{}
	log := New(f)
	log.Info("started", "agent_id", "a1")
	if len(f.lines) != 1 || !strings.Contains(f.lines[0], "started") || !strings.Contains(f.lines[0], "agent_id=a1") {
		t.Fatalf("got %q, want one line with the message and its key", f.lines)
	}
	f.runCleanup()
	log.Info("after the test ended")
	if len(f.lines) != 1 {
		t.Fatalf("got %d lines after cleanup, want the late line dropped", len(f.lines))
	}
}
