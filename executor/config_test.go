package executor

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	ok := Config{NATSURLs: []string{"nats://127.0.0.1:4222"}, WorkDir: "/tmp/x"}
	tests := []struct {
		name string
		mod  func(*Config)
		ok   bool
	}{
		{"minimal", func(*Config) {}, true},
		{"defaults", func(c *Config) { *c = DefaultConfig(); c.NATSURLs, c.WorkDir = ok.NATSURLs, ok.WorkDir }, true},
		{"no nats", func(c *Config) { c.NATSURLs = nil }, false},
		{"no work dir", func(c *Config) { c.WorkDir = "" }, false},
		{"bad prefix", func(c *Config) { c.SubjectPrefix = "a..b" }, false},
		{"bad resources", func(c *Config) { c.Resources = protocol.Scalars(map[string]int64{"cpus": -1}) }, false},
		{"bad isolation", func(c *Config) { c.Isolation = "vm" }, false},
		{"empty shim", func(c *Config) { c.Shim = []string{""} }, false},
		{"bad http addr", func(c *Config) { c.HTTPAddr = "nowhere" }, false},
		{"bad advertise addr", func(c *Config) { c.HTTPAdvertiseAddr = "nowhere" }, false},
		{"negative grace", func(c *Config) { c.DefaultGrace = -time.Second }, false},
		{"negative resend", func(c *Config) { c.ResendInterval = -1 }, false},
		{"negative files token ttl", func(c *Config) { c.FilesTokenTTL = -time.Hour }, false},
		{"portable", func(c *Config) { c.Isolation = runner.IsolationPortable }, true},
		{"negative gc delay", func(c *Config) { c.GCDelay = -time.Hour }, false},
		{"negative gc interval", func(c *Config) { c.GCInterval = -time.Second }, false},
		{"negative gc threshold", func(c *Config) { c.GCDiskThreshold = -0.5 }, false},
		{"gc threshold over 1", func(c *Config) { c.GCDiskThreshold = 1.01 }, false},
		{"gc threshold NaN", func(c *Config) { c.GCDiskThreshold = math.NaN() }, false},
		{"gc threshold 1", func(c *Config) { c.GCDiskThreshold = 1 }, true},
		{"negative gc budget", func(c *Config) { c.GCDiskBudget = -1 }, false},
		{"gc budget", func(c *Config) { c.GCDiskBudget = 10 << 30 }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			err := c.Validate()
			if tc.ok && err != nil || !tc.ok && !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestConfig_WithDefaults(t *testing.T) {
	t.Parallel()
	c, err := Config{NATSURLs: []string{"nats://x"}, WorkDir: "/tmp/x"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.FilesToken == "" || c.Hostname == "" || len(c.Shim) != 2 || c.Shim[1] != runner.ShimCommand ||
		c.SubjectPrefix != DefaultSubjectPrefix || c.ResendInterval != DefaultResendInterval || c.Logger == nil ||
		c.FilesTokenTTL != DefaultFilesTokenTTL {
		t.Fatalf("defaults not filled in: %+v", c)
	}
	if c.GCDelay != DefaultGCDelay || c.GCInterval != DefaultGCInterval || c.GCDiskThreshold != DefaultGCDiskThreshold ||
		c.GCDiskBudget != 0 {
		t.Fatalf("sandbox collector defaults not filled in: %+v", c)
	}
	// The delay follows the files token's lifetime unless set.
	c3, _ := Config{NATSURLs: []string{"nats://x"}, WorkDir: "/tmp/x", FilesTokenTTL: 2 * time.Hour}.withDefaults()
	if c3.GCDelay != 2*time.Hour {
		t.Fatalf("gc delay %s with a files token ttl of 2h, want 2h", c3.GCDelay)
	}
	c2, _ := Config{NATSURLs: []string{"nats://x"}, WorkDir: "/tmp/x"}.withDefaults()
	if c2.FilesToken == c.FilesToken {
		t.Fatal("two agents got the same generated files token")
	}
}

func TestAdvertiseAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ configured, listen, want string }{
		{"", "127.0.0.1:5051", "127.0.0.1:5051"},
		{"", "0.0.0.0:5051", "node1:5051"},
		{"", "[::]:5051", "node1:5051"},
		{"agent.example:80", "0.0.0.0:5051", "agent.example:80"},
	} {
		if got := advertiseAddr(tc.configured, tc.listen, "node1"); got != tc.want {
			t.Errorf("advertiseAddr(%q, %q): got %q, want %q", tc.configured, tc.listen, got, tc.want)
		}
	}
}

func TestNew_RefusesWhatTheMasterWould(t *testing.T) {
	t.Parallel()
	cfg := Config{NATSURLs: []string{"nats://127.0.0.1:1"}, WorkDir: t.TempDir(), Shim: []string{"/bin/true"},
		Resources: protocol.Scalars(map[string]int64{"cpus": 1000}), Attributes: protocol.Attributes{"": protocol.Text("x")}}
	if _, err := New(cfg); !errors.Is(err, ErrConfig) {
		t.Fatalf("empty attribute name: got %v, want ErrConfig", err)
	}
}
