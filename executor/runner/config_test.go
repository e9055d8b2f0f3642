//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	ok := Config{WorkDir: "/w", Shim: []string{"/bin/allot", "task-shim"}}
	cases := []struct {
		name   string
		mutate func(*Config)
		valid  bool
	}{
		{"minimal", func(*Config) {}, true},
		{"full", func(c *Config) {
			c.Isolation, c.CgroupParent, c.DefaultGrace, c.ShimEnv = IsolationCgroups, "/a/b", time.Second, []string{"A=1", "B="}
		}, true},
		{"no-workdir", func(c *Config) { c.WorkDir = "" }, false},
		{"no-shim", func(c *Config) { c.Shim = nil }, false},
		{"empty-shim", func(c *Config) { c.Shim = []string{""} }, false},
		{"bad-env", func(c *Config) { c.ShimEnv = []string{"A"} }, false},
		{"bad-isolation", func(c *Config) { c.Isolation = "vm" }, false},
		{"relative-cgroup", func(c *Config) { c.CgroupParent = "allot" }, false},
		{"root-cgroup", func(c *Config) { c.CgroupParent = "/" }, false},
		{"unclean-cgroup", func(c *Config) { c.CgroupParent = "/a/../b" }, false},
		{"negative-grace", func(c *Config) { c.DefaultGrace = -1 }, false},
		{"control-dir", func(c *Config) { c.ControlDir = "/c" }, true},
		{"control-dir-in-workdir", func(c *Config) { c.ControlDir = "/w/control" }, false},
		{"workdir-in-control-dir", func(c *Config) { c.ControlDir = "/" }, false},
		{"control-dir-is-workdir", func(c *Config) { c.ControlDir = "/w/." }, false},
		{"default-control-dir-is-workdir", func(c *Config) { c.WorkDir = "/x/control" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			err := c.Validate()
			if tc.valid != (err == nil) || err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want valid %v", err, tc.valid)
			}
		})
	}
}

// TestNew_Isolation checks that auto settles on a mode, and that requiring
// cgroups fails exactly when auto falls back (as it does on hosts where
// cgroup v2 lacks the memory controller).
func TestNew_Isolation(t *testing.T) {
	t.Parallel()
	const parent = "/allot-runner-test"
	cfg := testConfig(t, t.TempDir())
	cfg.Isolation, cfg.CgroupParent = IsolationAuto, parent
	auto, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Isolation = IsolationCgroups
	_, err = New(cfg)
	switch auto.Isolation() {
	case IsolationPortable:
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("auto fell back, but requiring cgroups gave %v", err)
		}
	case IsolationCgroups:
		if err != nil {
			t.Fatalf("auto chose cgroups, but requiring them gave %v", err)
		}
		_ = os.Remove(filepath.Join(auto.cgroupMount, parent))
	default:
		t.Fatalf("auto resolved to %q", auto.Isolation())
	}
	cfg.Isolation = IsolationPortable
	if r, err := New(cfg); err != nil || r.Isolation() != IsolationPortable {
		t.Fatalf("portable: got %v", err)
	}
}

func TestNew_RejectsInvalidConfig(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{}); !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v, want ErrConfig", err)
	}
	file := writeTempFile(t, "file", "")
	if _, err := New(testConfig(t, file)); !errors.Is(err, ErrConfig) {
		t.Fatalf("work dir is a file: got %v, want ErrConfig", err)
	}
}

func TestSpec_Validate(t *testing.T) {
	t.Parallel()
	ok := Spec{TaskID: "t", Name: "fw-1.task_2:x", Command: protocol.CommandInfo{Value: "true"}}
	cases := []struct {
		name   string
		mutate func(*Spec)
		err    error
	}{
		{"ok", func(*Spec) {}, nil},
		{"empty-name", func(s *Spec) { s.Name = "" }, ErrInvalidSpec},
		{"dot-name", func(s *Spec) { s.Name = ".." }, ErrInvalidSpec},
		{"hidden-name", func(s *Spec) { s.Name = ".allot" }, ErrInvalidSpec},
		{"slash-name", func(s *Spec) { s.Name = "a/b" }, ErrInvalidSpec},
		{"space-name", func(s *Spec) { s.Name = "a b" }, ErrInvalidSpec},
		{"long-name", func(s *Spec) { s.Name = strings.Repeat("a", MaxNameLen+1) }, ErrInvalidSpec},
		{"no-command", func(s *Spec) { s.Command.Value = "" }, ErrInvalidSpec},
		{"bad-env", func(s *Spec) { s.Env = map[string]string{"A=B": "x"} }, ErrInvalidSpec},
		{"negative-limits", func(s *Spec) { s.Limits.MemMiB = -1 }, ErrInvalidSpec},
		{"negative-grace", func(s *Spec) { s.Grace = -time.Second }, ErrInvalidSpec},
		{"escaping-output", func(s *Spec) {
			s.Command.URIs = []protocol.URI{{Value: "http://x/y", OutputFile: "../y"}}
		}, ErrSandboxEscape},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.mutate(&s)
			err := s.validate()
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("got %v, want %v", err, tc.err)
			}
		})
	}
	r := newRunner(t, "")
	bad := ok
	bad.Name = "../x"
	if _, err := r.Prepare(context.Background(), bad); !errors.Is(err, ErrInvalidSpec) || Reason(err) != protocol.ReasonTaskInvalid {
		t.Fatalf("prepare: got %v", err)
	}
	if _, err := r.Start(context.Background(), bad); !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("start: got %v", err)
	}
}
