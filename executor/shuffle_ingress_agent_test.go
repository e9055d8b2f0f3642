//go:build linux

package executor

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// TestAgent_ShuffleIngressOverNATS: a sender's file server asks the
// receiving agent's ingress for every chunk of a download into it, over
// NATS, and the download takes at least what the receiver's rate allows;
// a download naming an agent without an ingress is not held; the
// receiver applies the ingress list of the leader's command; and what a
// hostile or broken client puts on the receiver's subject is refused with
// a typed error and grants nothing.
func TestAgent_ShuffleIngressOverNATS(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	l := newFakeMaster(t, c)
	const rate = 4 << 20
	recv := startFakeAgent(t, c, func(cfg *Config) { cfg.ShuffleIngress = rate })
	send := startFakeAgent(t, c, nil)

	const size = 1 << 20
	data := writeMapOutput(t, send, size)

	start := time.Now()
	code, body, err := shuffleGet(send, "fw-s_map-0/part-1", "shuffle-1", string(recv.ID()))
	elapsed := time.Since(start)
	if err != nil || code != http.StatusOK || body != data {
		t.Fatalf("download into the receiver: %d, %d bytes, %v", code, len(body), err)
	}
	if got := recv.shuffle.ingress.granted.Load(); got != size {
		t.Fatalf("the receiver granted %d bytes, want %d", got, size)
	}
	// The port grants a chunk as it starts carrying it: the last of four
	// 256 KiB chunks is granted 3/16 s after the first.
	if least := time.Duration(size-256<<10) * time.Second / rate; elapsed < least {
		t.Fatalf("the download took %v, less than the %v the receiver's port allows", elapsed, least)
	}
	testutilWaitFor(t, func() error {
		recv.shuffle.ingress.mu.Lock()
		defer recv.shuffle.ingress.mu.Unlock()
		if n := len(recv.shuffle.ingress.transfers); n != 0 {
			return errors.New("the receiver still holds the ended transfer")
		}
		return nil
	})

	// No agent answers for ag-nobody: the download goes unpaced.
	code, body, err = shuffleGet(send, "fw-s_map-0/part-1", "shuffle-1", "ag-nobody")
	if err != nil || code != http.StatusOK || body != data {
		t.Fatalf("download into an agent without an ingress: %d, %d bytes, %v", code, len(body), err)
	}
	if got := recv.shuffle.ingress.granted.Load(); got != size {
		t.Fatalf("the receiver granted %d bytes after a download not into it, want %d", got, size)
	}

	// The leader's ingress list reaches the receiver's port.
	cmd := protocol.CoflowPrioritiesCommand{Epoch: 3, Ingress: []protocol.CoflowPriority{
		{FrameworkID: "fw-s", CoflowID: "shuffle-2", Src: send.ID(), Rank: 0},
		{FrameworkID: "fw-s", CoflowID: "shuffle-3", Src: "bad src!", Rank: 0}, // dropped, the rest kept
		{FrameworkID: "fw-s", CoflowID: "shuffle-1", Rank: 1},
	}}
	enc, err := protocol.Encode(protocol.MsgCoflowPrioritiesCommand, cmd)
	if err != nil {
		t.Fatal(err)
	}
	l.command(t, recv.ID(), enc)
	testutilWaitFor(t, func() error {
		ranks := recv.shuffle.ingress.ranks.Load()
		r2, ok2 := ranks.rank(files.Transfer{Framework: "fw-s", Coflow: "shuffle-2", Dst: string(send.ID())})
		r1, ok1 := ranks.rank(files.Transfer{Framework: "fw-s", Coflow: "shuffle-1", Dst: "ag-other"})
		if !ok2 || r2 != 0 || !ok1 || r1 != 1 {
			return errors.New("the ingress list is not applied yet")
		}
		if _, ok := ranks.rank(files.Transfer{Framework: "fw-s", Coflow: "shuffle-3", Dst: "bad src!"}); ok {
			t.Fatal("an entry naming an invalid agent was applied")
		}
		return nil
	})

	checkIngressRefusals(t, l, recv, send.ID(), size)
}

// checkIngressRefusals puts bad requests on the receiver's ingress subject
// and checks each is refused with its typed error, granting nothing.
func checkIngressRefusals(t *testing.T, l *fakeMaster, recv *agentProc, src protocol.AgentID, granted int64) {
	t.Helper()
	// Bad requests on the receiver's subject.
	subject, err := l.subj.ShuffleIngress(recv.ID())
	if err != nil {
		t.Fatal(err)
	}
	misaddressed, err := protocol.Encode(protocol.MsgIngressRequest, protocol.IngressRequest{
		FrameworkID: "fw-s", CoflowID: "shuffle-1", Src: src, Dst: "ag-elsewhere", Transfer: 9, Bytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"garbage":      {[]byte("\x00\x01garbage"), protocol.ErrMalformed},
		"misaddressed": {misaddressed, protocol.ErrInvalidArgument},
		"oversized":    {make([]byte, 8<<10), protocol.ErrTooLarge},
	} {
		msg, err := l.nc.Request(subject, tc.data, wait)
		if err != nil {
			t.Fatalf("%s: no answer: %v", name, err)
		}
		if err := protocol.DecodeReply(msg.Data, nil); !errors.Is(err, tc.want) {
			t.Errorf("%s: answered %v, want %v", name, err, tc.want)
		}
	}
	if got := recv.shuffle.ingress.granted.Load(); got != granted {
		t.Errorf("bad requests were granted bytes: %d, want %d", got, granted)
	}
	if got := recv.shuffle.counters.ingressRefused.Load(); got != 3 {
		t.Errorf("%d requests counted refused, want 3", got)
	}
}

// TestAgent_DownloadWithoutCoflowIsPaced: a tenant cannot escape an
// agent's egress capacity by naming no coflow: its download goes through
// the port (at the rate, with the unranked transfers), and is neither
// ordered nor reported as a shuffle.
func TestAgent_DownloadWithoutCoflowIsPaced(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	l := newFakeMaster(t, c)
	const rate = 4 << 20
	a := startFakeAgent(t, c, func(cfg *Config) { cfg.ShuffleEgress = rate })
	const size = 1 << 20
	data := writeMapOutput(t, a, size)
	start := time.Now()
	code, body, err := download(a, url.Values{"path": {"fw-s_map-0/part-1"}})
	elapsed := time.Since(start)
	if err != nil || code != http.StatusOK || body != data {
		t.Fatalf("download: %d, %d bytes, %v", code, len(body), err)
	}
	// The port grants a chunk once it has carried it: four 256 KiB chunks
	// at 4 MiB/s take a quarter of a second.
	if least := time.Duration(size) * time.Second / rate; elapsed < least {
		t.Fatalf("the download took %v, less than the %v the port allows", elapsed, least)
	}
	if paced, sent := a.shuffle.counters.paced.Load(), a.shuffle.counters.sent.Load(); paced != size || sent != 0 {
		t.Fatalf("paced %d bytes and counted %d shuffle bytes, want %d and 0", paced, sent, size)
	}
	if flows := l.flows(); len(flows) != 0 {
		t.Fatalf("a download naming no coflow was reported: %+v", flows)
	}
}

// writeMapOutput leaves size bytes of map output, fw-s_map-0/part-1, in
// the agent's sandboxes and returns them.
func writeMapOutput(t *testing.T, a *agentProc, size int) string {
	t.Helper()
	dir := filepath.Join(a.SandboxRoot(), "fw-s_map-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := strings.Repeat("k v\n", size/4)
	if err := os.WriteFile(filepath.Join(dir, "part-1"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAgent_ShuffleCompletionReportedAtOnce: a transfer's completion is
// reported at once, not after the report interval that paces the in-flight
// reports (a framework may end its job, and withdraw its coflow, right
// after its last fetch).
func TestAgent_ShuffleCompletionReportedAtOnce(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	l := newFakeMaster(t, c)
	// The interval is longer than the wait below.
	a := startFakeAgent(t, c, func(cfg *Config) { cfg.ShuffleReportInterval = time.Hour })
	data := writeMapOutput(t, a, 64<<10)
	for i := range 2 {
		code, body, err := shuffleGet(a, "fw-s_map-0/part-1", "shuffle-1", "ag-dst")
		if err != nil || code != http.StatusOK || body != data {
			t.Fatalf("download %d: %d, %d bytes, %v", i, code, len(body), err)
		}
		l.waitFlow(t, protocol.FlowProgress{FrameworkID: "fw-s", CoflowID: "shuffle-1", Src: a.ID(), Dst: "ag-dst",
			BytesSent: int64((i + 1) * len(data)), Transfers: i + 1})
	}
}

// startFakeAgent starts an agent of the fake master's subjects, its
// configuration adjusted by configure (nil: none).
func startFakeAgent(t *testing.T, c *testcluster.Cluster, configure func(*Config)) *agentProc {
	t.Helper()
	cfg := testConfig(t, c, t.TempDir())
	cfg.SubjectPrefix = "fake"
	if configure != nil {
		configure(&cfg)
	}
	return startAgent(t, cfg)
}
