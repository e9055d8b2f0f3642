//go:build linux

package executor

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/internal/testutil"
)

// syncBuffer is a log output read while the agent writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// An agent started before any NATS server answers waits for one, saying
// where it looks, instead of exiting; stopped meanwhile it says where it
// looked.
func TestAgent_waitsForNATS(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + l.Addr().String()
	l.Close() // nothing listens there now
	cfg := testConfig(t, newCluster(t), t.TempDir())
	var logs syncBuffer
	cfg.NATSURLs = []string{url}
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if out := logs.String(); strings.Count(out, "no NATS server answers yet") < 2 || !strings.Contains(out, url) {
			return errors.New("the agent has not tried twice yet")
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("the agent stopped while waiting for NATS: %v", err)
	default:
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "connect to NATS at "+url) || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("Run stopped while waiting: %v, want an error naming %s", err, url)
	}
}

// An agent whose file server's address is taken fails at once, naming the
// address and the flag that sets it.
func TestAgent_httpAddressTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := testConfig(t, newCluster(t), t.TempDir())
	cfg.HTTPAddr = taken.Addr().String()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Run(context.Background())
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), taken.Addr().String()) || !strings.Contains(err.Error(), "--http") {
		t.Fatalf("Run on a taken HTTP address: %v, want ErrConfig naming %s and --http", err, taken.Addr())
	}
}
