package raftstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// TestLogStoreFormat: a new data directory gets the format asked for, or
// bolt's; one that holds a log keeps its format, and asking for the other one
// is refused rather than starting from an empty log.
func TestLogStoreFormat(t *testing.T) {
	withBolt := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, boltFile), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	withWAL := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, walDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, walDir, walMeta), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	withBoth := func(t *testing.T) string {
		dir := withWAL(t)
		if err := os.WriteFile(filepath.Join(dir, boltFile), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	empty := func(t *testing.T) string { return t.TempDir() }
	for _, tc := range []struct {
		name  string
		dir   func(*testing.T) string
		asked string
		want  string
		err   error
	}{
		{"new, default", empty, "", LogStoreWAL, nil},
		{"new, wal asked", empty, LogStoreWAL, LogStoreWAL, nil},
		{"new, boltdb asked", empty, LogStoreBoltDB, LogStoreBoltDB, nil},
		{"boltdb held, default", withBolt, "", LogStoreBoltDB, nil},
		{"boltdb held and asked", withBolt, LogStoreBoltDB, LogStoreBoltDB, nil},
		{"boltdb held, wal asked", withBolt, LogStoreWAL, "", ErrLogStoreMismatch},
		{"wal held, default", withWAL, "", LogStoreWAL, nil},
		{"wal held, boltdb asked", withWAL, LogStoreBoltDB, "", ErrLogStoreMismatch},
		{"both held", withBoth, "", "", ErrLogStoreMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := logStoreFormat(tc.dir(t), tc.asked)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("logStoreFormat: %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestNode_RestartKeepsItsLogStore: a cluster started on each format keeps
// its log across a restart with the default (empty) LogStore, which takes
// the format the directory holds; a node asked for the other format does
// not start.
func TestNode_RestartKeepsItsLogStore(t *testing.T) {
	for _, format := range []string{LogStoreWAL, LogStoreBoltDB} {
		t.Run(format, func(t *testing.T) {
			dirs, addrs := tempDirs(t, 3), freeAddrs(t, 3)
			c := newTCPCluster(t, dirs, addrs, func(cfg *Config) { cfg.LogStore = format })
			want := seq("a", 10)
			applyAll(t, c.waitLeader(), want...)
			c.waitSame(want, c.ids...)
			for _, id := range c.ids {
				c.stop(id)
			}
			for _, dir := range dirs {
				held, err := logStoreFormat(filepath.Join(dir, "raft"), "")
				if err != nil || held != format {
					t.Fatalf("%s holds %q (%v), want %s", dir, held, err, format)
				}
			}
			other := map[string]string{LogStoreWAL: LogStoreBoltDB, LogStoreBoltDB: LogStoreWAL}[format]
			cfg := fastConfig(t, "n1")
			cfg.DataDir, cfg.BindAddr, cfg.LogStore = dirs[0], addrs[0], other
			if n, err := New(cfg, &testFSM{}); !errors.Is(err, ErrLogStoreMismatch) {
				if n != nil {
					_ = n.Shutdown()
				}
				t.Fatalf("a %s directory opened as %s: %v, want ErrLogStoreMismatch", format, other, err)
			}

			c = newTCPCluster(t, dirs, addrs, nil)
			leader := c.waitLeader()
			c.waitSame(want, c.ids...)
			applyAll(t, leader, "b")
			c.waitSame(append(want, "b"), c.ids...)
		})
	}
}

// TestWAL_inUse: a second open of a WAL that is open is refused at once,
// and the first one's Close lets it open again.
func TestWAL_inUse(t *testing.T) {
	dir := t.TempDir()
	logger := testLogger(t, "wal")
	first, err := openWAL(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := openWAL(dir, logger); !errors.Is(err, ErrDataDirInUse) {
		if second != nil {
			_ = second.Close()
		}
		t.Fatalf("second open: %v, want ErrDataDirInUse", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := openWAL(dir, logger)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWAL_reopensAfterTailTruncation: a follower whose last entry a new
// leader overwrites truncates its log's tail; its next start must read the
// log. raft-wal v0.4.0 marked the tail segment sealed without
// writing its index, and the next start panicked in raft.NewRaft ("sealed
// segment has no index block"): a master killed in a load run could not
// start again.
func TestWAL_reopensAfterTailTruncation(t *testing.T) {
	dir := t.TempDir()
	logger := testLogger(t, "wal")
	w, err := openWAL(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 20; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte{byte(i)}})
	}
	if err := w.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteRange(20, 20); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = openWAL(dir, logger)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer func() { _ = w.Close() }()
	for _, i := range []uint64{1, 19} {
		var got raft.Log
		if err := w.GetLog(i, &got); err != nil || got.Index != i || got.Data[0] != byte(i) {
			t.Fatalf("entry %d after the reopen: %+v, %v", i, got, err)
		}
	}
	if last, err := w.LastIndex(); err != nil || last != 19 {
		t.Fatalf("last index %d (%v), want 19", last, err)
	}
}
