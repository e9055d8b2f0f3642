package raftstore

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// lockedBuffer is a log output the test reads while Raft writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A data directory is its node's: another node ID started on it is
// refused, naming the owner; the owner starts again. Peers other than those the Raft state holds are ignored,
// with a warning that names both.
func TestNode_DataDirBelongsToItsNode(t *testing.T) {
	dir, addr := tempDirs(t, 1)[0], freeAddrs(t, 1)[0]
	cfg := fastConfig(t, "n1")
	cfg.DataDir, cfg.BindAddr = dir, addr
	cfg.Peers, cfg.Bootstrap = []Peer{{ID: "n1", Address: addr}}, true
	n, err := New(cfg, &testFSM{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() error {
		if !n.IsLeader() {
			return errors.New("not leader yet")
		}
		return nil
	})
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}

	other := cfg
	other.NodeID = "n2"
	if _, err := New(other, &testFSM{}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `holds the Raft state of node "n1", not "n2"`) {
		t.Fatalf("New as n2 on n1's data directory: %v, want ErrInvalidConfig naming n1", err)
	}

	var logs lockedBuffer
	again := cfg
	again.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	again.Peers = append(again.Peers, Peer{ID: "n9", Address: "127.0.0.1:1"})
	n, err = New(again, &testFSM{})
	if err != nil {
		t.Fatalf("New as n1 again: %v", err)
	}
	t.Cleanup(func() { _ = n.Shutdown() })
	if out := logs.String(); !strings.Contains(out, "the peers given are ignored") || !strings.Contains(out, "n9@127.0.0.1:1") {
		t.Fatalf("restart with other peers logged %q, want a warning naming them", out)
	}
}
