package raftstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// testFSM records every command it applies, and snapshots and restores that record.
type testFSM struct {
	mu       sync.Mutex
	cmds     []string
	batches  []int // size of each ApplyBatch call
	lastIdx  uint64
	restores int
	// gate, if set, is received from (outside mu) before each ApplyBatch; close it to
	// let everything through. Set it with hold.
	gate chan struct{}
}

func (f *testFSM) ApplyBatch(index uint64, cmds [][]byte) []any {
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if index <= f.lastIdx {
		panic(fmt.Sprintf("index %d after %d", index, f.lastIdx))
	}
	f.lastIdx = index
	f.batches = append(f.batches, len(cmds))
	out := make([]any, len(cmds))
	for i, c := range cmds {
		f.cmds = append(f.cmds, string(c))
		if bytes.HasPrefix(c, []byte("fail:")) {
			out[i] = errors.New(string(c))
		} else {
			out[i] = "ok:" + string(c)
		}
	}
	return out
}

func (f *testFSM) Snapshot() (Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &testSnapshot{cmds: slices.Clone(f.cmds)}, nil
}

func (f *testFSM) Restore(r io.ReadCloser) error {
	var cmds []string
	if err := json.NewDecoder(r).Decode(&cmds); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = cmds
	f.restores++
	f.lastIdx = 0
	return nil
}

// hold makes ApplyBatch wait until the returned channel is closed.
func (f *testFSM) hold() chan struct{} {
	gate := make(chan struct{})
	f.mu.Lock()
	f.gate = gate
	f.mu.Unlock()
	return gate
}

func (f *testFSM) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.cmds)
}

func (f *testFSM) batchSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.batches)
}

func (f *testFSM) restoreCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restores
}

type testSnapshot struct{ cmds []string }

func (s *testSnapshot) Persist(w io.Writer) error { return json.NewEncoder(w).Encode(s.cmds) }
func (s *testSnapshot) Release()                  {}
