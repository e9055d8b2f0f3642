package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/protocol"
)

// senderInto returns the shuffle server of agent id (egress capped at
// egress bytes a second, 0 for none), which asks r's ingress in process as
// NATS would carry the asks.
func senderInto(id protocol.AgentID, egress int64, r *ingressServer) *shuffleServer {
	s := newShuffleServer(Config{ShuffleSlots: 4, ShuffleEgress: egress}, hclog.NewNullLogger())
	s.asker.self = func() protocol.AgentID { return id }
	s.asker.ask = func(ctx context.Context, _ protocol.AgentID, data []byte) ([]byte, error) {
		var req protocol.IngressRequest
		if err := decodeIngress(data, &req); err != nil {
			return protocol.EncodeReply(nil, err)
		}
		return protocol.EncodeReply(nil, r.grant(ctx, &req))
	}
	s.asker.tell = func(_ protocol.AgentID, data []byte) error {
		var req protocol.IngressRequest
		if err := decodeIngress(data, &req); err != nil {
			return err
		}
		r.end(req.Src, req.Transfer)
		return nil
	}
	return s
}

// runIngress runs the sends (their servers senders into r, in 256 KiB
// chunks) in a synctest bubble's time and returns when each one's last
// chunk was granted, from the start.
func runIngress(t *testing.T, r *ingressServer, sends ...paceSend) map[string]time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go r.pacer.run(ctx)
	for i := range sends {
		if p := sends[i].server.pacer; p != nil {
			go p.run(ctx)
		}
		sends[i].chunk = 256 << 10
	}
	return runSends(ctx, t, sends)
}

// TestShuffleIngress_TwoSendersIntoACappedReceiver: agent r takes in 4
// MiB/s. Sender b's transfer (coflow b, 2 MiB, ranked second in r's
// ingress list) has the port to itself until sender a's (coflow a, 2 MiB,
// ranked first) arrives at 0.3 s. On paper a takes the port and ends at
// 0.3 + 0.5 = 0.8 s; b sent 1.2 MiB before and ends at 0.8 + 0.2 = 1.0 s.
// The port grants a chunk (256 KiB, 62.5 ms) as it starts carrying it, so
// a transfer's last grant comes one chunk before its end: a at 0.75 s
// (it waits for b's chunk under way at 0.3 s), b at 0.9375 s. First come,
// first served would end b at 0.5 s.
func TestShuffleIngress_TwoSendersIntoACappedReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newIngressServer(4 << 20)
		r.setPriorities(1, []protocol.CoflowPriority{
			{FrameworkID: "fw", CoflowID: "a", Src: "ag-a", Rank: 0},
			{FrameworkID: "fw", CoflowID: "b", Src: "ag-b", Rank: 1},
		})
		end := runIngress(t, r,
			paceSend{name: "b", server: senderInto("ag-b", 0, r), t: files.Transfer{Framework: "fw", Coflow: "b", Dst: "ag-r"}, size: 2 << 20},
			paceSend{name: "a", server: senderInto("ag-a", 0, r), t: files.Transfer{Framework: "fw", Coflow: "a", Dst: "ag-r"}, after: 300 * time.Millisecond, size: 2 << 20},
		)
		checkEnds(t, end, map[string]time.Duration{"a": 750 * time.Millisecond, "b": 937500 * time.Microsecond})
		if got := r.granted.Load(); got != 4<<20 {
			t.Errorf("granted %d bytes, want %d", got, 4<<20)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.transfers) != 0 {
			t.Errorf("transfers kept after they ended: %v", r.transfers)
		}
	})
}

// TestShuffleIngress_BothPortsAtOnce: a 2 MiB transfer from a sender whose
// egress is 4 MiB/s into a receiver whose ingress is 4 MiB/s takes 0.5 s,
// not the 1 s of waiting for one port and then the other.
func TestShuffleIngress_BothPortsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newIngressServer(4 << 20)
		s := senderInto("ag-s", 4<<20, r)
		end := runIngress(t, r, paceSend{name: "x", server: s, t: files.Transfer{Framework: "fw", Coflow: "x", Dst: "ag-r"}, size: 2 << 20})
		checkEnds(t, end, map[string]time.Duration{"x": 500 * time.Millisecond})
	})
}

// TestShuffleIngress_ReceiverGone: a receiver that does not answer lets
// the chunk go unpaced and is not asked again for a while; one without an
// ingress is not asked again either.
func TestShuffleIngress_ReceiverGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newShuffleServer(Config{ShuffleSlots: 4}, hclog.NewNullLogger())
		s.asker.self = func() protocol.AgentID { return "ag-s" }
		asks := map[protocol.AgentID]int{}
		s.asker.ask = func(ctx context.Context, dst protocol.AgentID, _ []byte) ([]byte, error) {
			asks[dst]++
			if dst == "ag-none" {
				return nil, errNoIngress
			}
			<-ctx.Done() // gone: never answers
			return nil, ctx.Err()
		}
		s.asker.tell = func(protocol.AgentID, []byte) error { return nil }
		for _, dst := range []string{"ag-gone", "ag-none"} {
			for range 2 {
				tr := files.Transfer{Framework: "fw", Coflow: "c", Dst: dst}
				if err := pacedSend(t.Context(), s, tr, 1<<20, 256<<10); err != nil {
					t.Fatalf("send to %s: %v", dst, err)
				}
			}
		}
		if asks["ag-gone"] != 1 || asks["ag-none"] != 1 {
			t.Errorf("asks %v, want one each", asks)
		}
		if got := s.asker.failed.Load(); got != 1 {
			t.Errorf("%d chunks counted unanswered, want 1", got)
		}
		time.Sleep(ingressRecheck + time.Millisecond)
		if err := pacedSend(t.Context(), s, files.Transfer{Framework: "fw", Coflow: "c", Dst: "ag-none"}, 1, 1); err != nil {
			t.Fatal(err)
		}
		if asks["ag-none"] != 2 {
			t.Errorf("ag-none asked %d times after the recheck time, want 2", asks["ag-none"])
		}
	})
}

// TestShuffleIngress_ForgetsReceiversNamedOnce: a tenant's downloads
// naming thousands of agents that do not exist leave the sender
// remembering no more of them than it must: those whose pause is over are
// forgotten once many are skipped.
func TestShuffleIngress_ForgetsReceiversNamedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newShuffleServer(Config{ShuffleSlots: 4}, hclog.NewNullLogger())
		s.asker.self = func() protocol.AgentID { return "ag-s" }
		s.asker.ask = func(context.Context, protocol.AgentID, []byte) ([]byte, error) { return nil, errNoIngress }
		s.asker.tell = func(protocol.AgentID, []byte) error { return nil }
		send := func(dst string) {
			if err := pacedSend(t.Context(), s, files.Transfer{Framework: "fw", Coflow: "c", Dst: dst}, 1, 1); err != nil {
				t.Fatalf("send to %s: %v", dst, err)
			}
		}
		for i := range 2 * unpacedSweepAt {
			send(fmt.Sprintf("ag-fake%d", i))
		}
		remembered := func() int {
			s.asker.mu.Lock()
			defer s.asker.mu.Unlock()
			return len(s.asker.unpaced)
		}
		if n := remembered(); n != 2*unpacedSweepAt {
			t.Fatalf("%d receivers skipped within the pause, want all %d", n, 2*unpacedSweepAt)
		}
		time.Sleep(ingressRecheck + time.Millisecond)
		send("ag-fake-last")
		if n := remembered(); n != 1 {
			t.Errorf("%d receivers remembered after their pause, want only the last", n)
		}
	})
}

// TestShuffleIngress_BadRequests: what a broken or hostile sender puts on
// an ingress subject is refused with a typed error before anything is
// granted.
func TestShuffleIngress_BadRequests(t *testing.T) {
	valid := protocol.IngressRequest{FrameworkID: "fw", CoflowID: "c", Src: "ag-s", Dst: "ag-r", Transfer: 1, Bytes: 1}
	encode := func(typ protocol.MsgType, body any) []byte {
		data, err := protocol.Encode(typ, body)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	huge := valid
	huge.CoflowID = strings.Repeat("c", 5000)
	tooMany := valid
	tooMany.Bytes = protocol.MaxIngressChunk + 1
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"not msgpack":    {[]byte("\xc1garbage"), protocol.ErrMalformed},
		"another type":   {encode(protocol.MsgKillCommand, protocol.KillCommand{FrameworkID: "fw", TaskID: "t"}), protocol.ErrMalformed},
		"oversized":      {encode(protocol.MsgIngressRequest, huge), protocol.ErrTooLarge},
		"too many bytes": {encode(protocol.MsgIngressRequest, tooMany), protocol.ErrInvalidArgument},
	} {
		var req protocol.IngressRequest
		if err := decodeIngress(tc.data, &req); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
	var req protocol.IngressRequest
	if err := decodeIngress(encode(protocol.MsgIngressRequest, valid), &req); err != nil || req != valid {
		t.Fatalf("valid request: %+v, %v", req, err)
	}
}

// TestShuffleIngress_CutShort: a transfer that ends with its next chunk
// asked for ahead (its client went away) takes that ask back: the
// receiver grants it nothing and forgets the transfer.
func TestShuffleIngress_CutShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newIngressServer(1 << 20)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go r.pacer.run(ctx)
		s := senderInto("ag-s", 0, r)
		// Another sender holds the port, ranked first, so that the ask
		// made ahead waits.
		r.setPriorities(1, []protocol.CoflowPriority{{FrameworkID: "fw", CoflowID: "first", Rank: 0}})
		other := senderInto("ag-o", 0, r)
		go func() {
			_ = pacedSend(ctx, other, files.Transfer{Framework: "fw", Coflow: "first", Dst: "ag-r"}, 4<<20, 256<<10)
		}()
		synctest.Wait()
		flow, err := s.Acquire(ctx, files.Transfer{Framework: "fw", Coflow: "c", Dst: "ag-r"})
		if err != nil {
			t.Fatal(err)
		}
		if err := flow.Pace(ctx, 256<<10, 256<<10); err != nil {
			t.Fatal(err)
		}
		flow.Done(256<<10, false)
		synctest.Wait()
		r.mu.Lock()
		_, kept := r.transfers[ingressKey{src: "ag-s", transfer: 1}]
		r.mu.Unlock()
		if kept {
			t.Error("the receiver still holds the transfer cut short")
		}
		r.pacer.mu.Lock()
		for _, w := range r.pacer.waiting {
			if w.t.Dst == "ag-s" {
				t.Error("the ask made ahead still waits at the receiver")
			}
		}
		r.pacer.mu.Unlock()
		cancel()
	})
}

// TestShuffleIngress_ForgetsIdleTransfers: a transfer whose sender went
// quiet (it died without saying so) is forgotten after ingressIdle, but
// one with a chunk waiting longer than that for a busy port is kept and
// served.
func TestShuffleIngress_ForgetsIdleTransfers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newIngressServer(1 << 10) // 1 KiB/s
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go r.pacer.run(ctx)
		ask := func(src protocol.AgentID, n int) error {
			return r.grant(ctx, &protocol.IngressRequest{FrameworkID: "fw", CoflowID: "c", Src: src, Dst: "ag-r", Transfer: 1, Bytes: n})
		}
		if err := ask("ag-dead", 1<<10); err != nil { // the port is busy until 1 s
			t.Fatal(err)
		}
		if err := ask("ag-hog", 39<<10); err != nil { // granted at 1 s, busy until 40 s
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() {
			time.Sleep(time.Second)
			waited <- ask("ag-wait", 1<<10) // waits until 40 s
		}()
		time.Sleep(35 * time.Second)
		go func() { _ = ask("ag-new", 1<<10) }()
		synctest.Wait()
		r.mu.Lock()
		var kept []protocol.AgentID
		for k := range r.transfers {
			kept = append(kept, k.src)
		}
		r.mu.Unlock()
		slices.Sort(kept)
		if want := []protocol.AgentID{"ag-new", "ag-wait"}; !slices.Equal(kept, want) {
			t.Fatalf("kept %v at 35 s, want %v", kept, want)
		}
		if err := <-waited; err != nil {
			t.Fatalf("the waiting chunk: %v", err)
		}
		cancel()
	})
}
