//go:build linux

package executor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// flows returns every coflow flow reported, in the order reported.
func (m *fakeMaster) flows() []protocol.FlowProgress {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.coflows)
}

// waitFlow waits until a report carries want exactly.
func (m *fakeMaster) waitFlow(t *testing.T, want protocol.FlowProgress) {
	t.Helper()
	testutilWaitFor(t, func() error {
		if !slices.Contains(m.flows(), want) {
			return fmt.Errorf("reported %+v, want %+v among them", m.flows(), want)
		}
		return nil
	})
}

// shuffleGet downloads path from the agent as a shuffle transfer.
func shuffleGet(a *agentProc, path, coflow, dst string) (int, string, error) {
	return download(a, url.Values{"path": {path}, "coflow": {coflow}, "dst": {dst}})
}

// download asks the agent's file server for a download with the agent's
// files token.
func download(a *agentProc, q url.Values) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+a.HTTPAddr()+"/v1/files/download?"+q.Encode(), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+a.FilesToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func TestAgent_ShuffleTransfersReportedAndOrdered(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	l := newFakeMaster(t, c)
	cfg := testConfig(t, c, t.TempDir())
	cfg.SubjectPrefix = "fake"
	cfg.ShuffleSlots = 1
	a := startAgent(t, cfg)
	if a.ID() != "ag-fake-1" {
		t.Fatalf("agent id %s, want ag-fake-1", a.ID())
	}
	dir := filepath.Join(a.SandboxRoot(), "fw-s_map-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := strings.Repeat("k v\n", 250)
	if err := os.WriteFile(filepath.Join(dir, "part-1"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}

	// A transfer is served and reported with its flow's totals.
	code, body, err := shuffleGet(a, "fw-s_map-0/part-1", "shuffle-1", "ag-dst")
	if err != nil || code != http.StatusOK || body != data {
		t.Fatalf("download: %d, %d bytes, %v; want 200 and the file", code, len(body), err)
	}
	l.waitFlow(t, protocol.FlowProgress{FrameworkID: "fw-s", CoflowID: "shuffle-1", Src: "ag-fake-1", Dst: "ag-dst",
		BytesSent: int64(len(data)), Transfers: 1})

	// With the only slot held, two transfers wait in arrival order until
	// the leader's priorities put the later one first.
	release, err := a.shuffle.gate.acquire(context.Background(), files.Transfer{Framework: "fw-s", Coflow: "hold", Dst: "ag-x"})
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 2)
	get := func(coflow string) {
		code, body, err := shuffleGet(a, "fw-s_map-0/part-1", coflow, "ag-dst")
		if err == nil && (code != http.StatusOK || body != data) {
			err = fmt.Errorf("%s: got %d, %d bytes", coflow, code, len(body))
		}
		results <- err
	}
	low, high := files.Transfer{Framework: "fw-s", Coflow: "low", Dst: "ag-dst"}, files.Transfer{Framework: "fw-s", Coflow: "high", Dst: "ag-dst"}
	waitQueue := func(want ...files.Transfer) {
		t.Helper()
		testutilWaitFor(t, func() error {
			if got := a.shuffle.gate.queue(); !slices.Equal(got, want) {
				return fmt.Errorf("waiting %v, want %v", got, want)
			}
			return nil
		})
	}
	go get("low")
	waitQueue(low)
	go get("high")
	waitQueue(low, high)
	cmd := protocol.CoflowPrioritiesCommand{Epoch: 7, Priorities: []protocol.CoflowPriority{
		{FrameworkID: "fw-s", CoflowID: "low", Rank: 1},
		{FrameworkID: "bad framework", CoflowID: "low", Rank: 0}, // dropped, the rest kept
		{FrameworkID: "fw-s", CoflowID: "high", Dst: "ag-dst", Rank: 0},
	}}
	data7, err := protocol.Encode(protocol.MsgCoflowPrioritiesCommand, cmd)
	if err != nil {
		t.Fatal(err)
	}
	l.command(t, a.ID(), data7)
	waitQueue(high, low)
	release()
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	for _, cf := range []string{"high", "low"} {
		l.waitFlow(t, protocol.FlowProgress{FrameworkID: "fw-s", CoflowID: cf, Src: "ag-fake-1", Dst: "ag-dst",
			BytesSent: int64(len(data)), Transfers: 1})
	}
	// high ended before low was granted, so it was reported first.
	flows := l.flows()
	hi := slices.IndexFunc(flows, func(f protocol.FlowProgress) bool { return f.CoflowID == "high" })
	lo := slices.IndexFunc(flows, func(f protocol.FlowProgress) bool { return f.CoflowID == "low" })
	if hi > lo {
		t.Fatalf("reported %+v: low before high", flows)
	}
}

// TestAgent_ShuffleProgressReportedInFlight: with the egress capped, the
// agent reports what a transfer has sent while it runs (Aalo learns a
// coflow's size from these), before the transfer ends, and then its total.
func TestAgent_ShuffleProgressReportedInFlight(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	l := newFakeMaster(t, c)
	cfg := testConfig(t, c, t.TempDir())
	cfg.SubjectPrefix = "fake"
	cfg.ShuffleEgress = 4 << 20 // 3 MiB take 0.75 s
	a := startAgent(t, cfg)
	dir := filepath.Join(a.SandboxRoot(), "fw-s_map-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := strings.Repeat("0123456789abcdef", 3<<16)
	if err := os.WriteFile(filepath.Join(dir, "part-0"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var ended atomic.Bool
	result := make(chan error, 1)
	go func() {
		code, body, err := shuffleGet(a, "fw-s_map-0/part-0", "big", "ag-dst")
		ended.Store(true)
		if err == nil && (code != http.StatusOK || body != data) {
			err = fmt.Errorf("got %d, %d bytes", code, len(body))
		}
		result <- err
	}()
	testutilWaitFor(t, func() error {
		for _, f := range l.flows() {
			if f.CoflowID == "big" && f.BytesSent > 0 && f.BytesSent < int64(len(data)) && f.Transfers == 0 {
				return nil
			}
		}
		return fmt.Errorf("no report of the transfer in flight among %+v", l.flows())
	})
	if ended.Load() {
		t.Fatal("the transfer had ended when its progress in flight was seen")
	}
	if err := <-result; err != nil {
		t.Fatal(err)
	}
	l.waitFlow(t, protocol.FlowProgress{FrameworkID: "fw-s", CoflowID: "big", Src: "ag-fake-1", Dst: "ag-dst",
		BytesSent: int64(len(data)), Transfers: 1})
}
