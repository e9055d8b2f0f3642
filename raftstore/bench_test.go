package raftstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// countFSM only counts commands, so the benchmark measures replication, not the FSM.
type countFSM struct{ n atomic.Uint64 }

func (f *countFSM) ApplyBatch(_ uint64, cmds [][]byte) []any {
	f.n.Add(uint64(len(cmds)))
	return make([]any, len(cmds))
}

func (f *countFSM) Snapshot() (Snapshot, error) { return countSnapshot(f.n.Load()), nil }

func (f *countFSM) Restore(r io.ReadCloser) error {
	var buf [8]byte
	if _, err := io.ReadFull(r, buf[:]); err != nil {
		return err
	}
	f.n.Store(binary.BigEndian.Uint64(buf[:]))
	return nil
}

type countSnapshot uint64

func (s countSnapshot) Persist(w io.Writer) error {
	_, err := w.Write(binary.BigEndian.AppendUint64(nil, uint64(s)))
	return err
}
func (countSnapshot) Release() {}

// BenchmarkApply measures committed commands per second through a three-node cluster on
// loopback TCP with disk stores, for 1, 16 and 256 concurrent appliers of 256-byte
// commands. cmds/entry shows how many commands group commit packed per Raft entry. The
// unbatched/... sub-benchmarks are the baseline without group commit: every command is
// its own raft.Apply and log entry (Raft still shares disk syncs between waiting entries).
//
//	go test -run '^$' -bench BenchmarkApply -benchtime 3s ./raftstore/
func BenchmarkApply(b *testing.B) {
	leader := benchCluster(b)
	ctx := context.Background()
	grouped := func(cmd []byte) error { _, err := leader.Apply(ctx, cmd); return err }
	unbatched := func(cmd []byte) error { return leader.raft.Apply(encodeFrame([][]byte{cmd}), 0).Error() }
	for _, appliers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("appliers=%d", appliers), func(b *testing.B) {
			runAppliers(b, leader, appliers, grouped)
		})
	}
	for _, appliers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("unbatched/appliers=%d", appliers), func(b *testing.B) {
			runAppliers(b, leader, appliers, unbatched)
		})
	}
}

// BenchmarkLogStores compares the durable log's formats (Config.LogStore) as
// BenchmarkApply measures: with one applier, 1/cmds/s is a commit's latency.
//
//	go test -run '^$' -bench BenchmarkLogStores -benchtime 3s ./raftstore/
func BenchmarkLogStores(b *testing.B) {
	for _, format := range []string{LogStoreWAL, LogStoreBoltDB} {
		for _, appliers := range []int{1, 16} {
			b.Run(fmt.Sprintf("store=%s/appliers=%d", format, appliers), func(b *testing.B) {
				leader := benchClusterOf(b, format)
				runAppliers(b, leader, appliers, func(cmd []byte) error { _, err := leader.Apply(context.Background(), cmd); return err })
			})
		}
	}
}

// benchCluster starts three durable nodes on loopback TCP and returns the leader once
// it has applied everything from earlier terms.
func benchCluster(b *testing.B) *Node { return benchClusterOf(b, "") }

// benchClusterOf is benchCluster with the log store format given.
func benchClusterOf(b *testing.B, format string) *Node {
	dirs, addrs := tempDirs(b, 3), freeAddrs(b, 3)
	var peers []Peer
	for i, a := range addrs {
		peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i+1), Address: a})
	}
	var nodes []*Node
	for i, p := range peers {
		cfg := DefaultConfig() // LAN timings
		cfg.NodeID, cfg.DataDir, cfg.BindAddr = p.ID, dirs[i], p.Address
		cfg.Peers, cfg.Bootstrap, cfg.LogStore = peers, true, format
		// Warnings only (an election, a lost quorum), straight to stderr: benchmark logs
		// would otherwise be printed in full.
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr})
		n, err := New(cfg, &countFSM{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = n.Shutdown() })
		nodes = append(nodes, n)
	}
	var leader *Node
	waitFor(b, 10*time.Second, func() error {
		for _, n := range nodes {
			if n.IsLeader() {
				leader = n
				return nil
			}
		}
		return fmt.Errorf("no leader")
	})
	if err := leader.Barrier(context.Background()); err != nil {
		b.Fatal(err)
	}
	return leader
}

// runAppliers applies b.N 256-byte commands from the given number of goroutines and
// reports cmds/s and, if group commit ran, cmds/entry.
func runAppliers(b *testing.B, leader *Node, appliers int, apply func([]byte) error) {
	cmd := make([]byte, 256)
	entries, commands := leader.batcher.entries.Load(), leader.batcher.commands.Load()
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range appliers {
		wg.Go(func() {
			for failed.Load() == nil && next.Add(1) <= int64(b.N) {
				if err := apply(cmd); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		// A leader change here means the machine starved Raft's heartbeats.
		b.Fatalf("apply failed (is the machine overloaded?): %v", *err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cmds/s")
	if e := leader.batcher.entries.Load() - entries; e > 0 {
		b.ReportMetric(float64(leader.batcher.commands.Load()-commands)/float64(e), "cmds/entry")
	}
}
