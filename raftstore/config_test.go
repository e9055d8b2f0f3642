package raftstore

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	durable := func() Config {
		c := DefaultConfig()
		c.NodeID, c.DataDir = "n1", "/tmp/x"
		return c
	}
	cases := []struct {
		name   string
		modify func(*Config)
		want   string // substring of the error; empty means valid
	}{
		{"defaults with id and dir", func(*Config) {}, ""},
		{"in memory", func(c *Config) { c.DataDir, c.InMemory, c.Network = "", true, NewInmemNetwork() }, ""},
		{"no id", func(c *Config) { c.NodeID = "" }, "node id"},
		{"no data dir", func(c *Config) { c.DataDir = "" }, "data dir"},
		{"in memory without network", func(c *Config) { c.InMemory = true }, "network"},
		{"bad bind addr", func(c *Config) { c.BindAddr = "nope" }, "bind addr"},
		{"unspecified advertise", func(c *Config) { c.AdvertiseAddr = "0.0.0.0:7000" }, "not reachable"},
		{"bad advertise", func(c *Config) { c.AdvertiseAddr = "host" }, "advertise addr"},
		{"tiny heartbeat", func(c *Config) { c.HeartbeatTimeout = time.Millisecond }, "heartbeat"},
		{"election below heartbeat", func(c *Config) { c.ElectionTimeout = 10 * time.Millisecond }, "election"},
		{"lease above heartbeat", func(c *Config) { c.LeaderLeaseTimeout = 2 * time.Second }, "lease"},
		{"tiny commit", func(c *Config) { c.CommitTimeout = 0 }, "commit"},
		{"tiny snapshot interval", func(c *Config) { c.SnapshotInterval = 0 }, "snapshot interval"},
		{"negative apply timeout", func(c *Config) { c.ApplyTimeout = -1 }, "apply timeout"},
		{"zero max batch", func(c *Config) { c.MaxBatch = 0 }, "max batch"},
		{"zero max batch bytes", func(c *Config) { c.MaxBatchBytes = 0 }, "max batch bytes"},
		{"zero in flight", func(c *Config) { c.MaxInFlight = 0 }, "in flight"},
		{"zero retain", func(c *Config) { c.SnapshotRetain = 0 }, "retain"},
		{"peer without address", func(c *Config) { c.Peers = []Peer{{ID: "n2"}} }, "required"},
		{"duplicate peer id", func(c *Config) {
			c.Peers = []Peer{{ID: "n2", Address: "a:1"}, {ID: "n2", Address: "b:1"}}
		}, "listed twice"},
		{"duplicate peer address", func(c *Config) {
			c.Peers = []Peer{{ID: "n2", Address: "a:1"}, {ID: "n3", Address: "a:1"}}
		}, "listed twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := durable()
			tc.modify(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want ErrInvalidConfig mentioning %q", err, tc.want)
			}
		})
	}
}

func TestNew_RejectsBadInput(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{}, &testFSM{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New(empty config) = %v, want ErrInvalidConfig", err)
	}
	cfg := fastConfig(t, "n1")
	cfg.InMemory, cfg.Network = true, NewInmemNetwork()
	if _, err := New(cfg, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New(nil fsm) = %v, want ErrInvalidConfig", err)
	}
	// This node listed under another address than the one it advertises.
	cfg.Bootstrap, cfg.Peers = true, []Peer{{ID: "n1", Address: "elsewhere"}}
	if _, err := New(cfg, &testFSM{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New(self peer at wrong address) = %v, want ErrInvalidConfig", err)
	}
	cfg.Peers = []Peer{{ID: "n2", Address: "n2"}, {ID: "n3", Address: "n3"}}
	if _, err := New(cfg, &testFSM{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New(peers without this node) = %v, want ErrInvalidConfig", err)
	}
}
