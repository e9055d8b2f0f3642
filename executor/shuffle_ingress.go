package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/protocol"
)

// This file holds the agent's shuffle ingress (Config.ShuffleIngress):
// what other agents' file servers send to this agent's tasks shares a
// receiving port. The bytes do not pass through the agent (a task fetches
// from the sender's file server), so the senders ask: before each chunk
// of a transfer whose receiver is this agent, the sender's shuffle server
// asks this agent's ingress for it (protocol.IngressRequest on
// protocol.Subjects.ShuffleIngress), and this agent grants the chunks a
// port's worth a second, the best-ranked transfer first by the ingress
// list of the leader's latest command. The sender then paces the chunk
// through its own egress. shuffle_ingress_client.go is the asking side.

// ingressServer is the receiving side. It knows nothing of NATS: the agent
// passes it the decoded requests.
type ingressServer struct {
	pacer *portPacer
	ranks atomic.Pointer[rankTable]

	mu        sync.Mutex
	epoch     uint64
	transfers map[ingressKey]*ingressTransfer
	arrived   uint64
	swept     time.Time

	granted atomic.Int64 // bytes granted, for the metrics
}

// ingressKey names a transfer at the receiver: its sender and the
// sender's number for it.
type ingressKey struct {
	src      protocol.AgentID
	transfer uint64
}

// ingressTransfer is a transfer the receiver has heard of. t keys its rank
// (Dst holding the sender, as the ingress list does); asks counts its
// chunks waiting for the port, last when it was last heard of or served.
type ingressTransfer struct {
	t    files.Transfer
	seq  uint64
	asks int
	last time.Time
}

// ingressIdle is how long a transfer that asked nothing more is kept: a
// sender that died never says it is done.
const ingressIdle = 30 * time.Second

func newIngressServer(rate int64) *ingressServer {
	s := &ingressServer{transfers: map[ingressKey]*ingressTransfer{}}
	empty := newRankTable(nil, ingressEnd)
	s.ranks.Store(&empty)
	s.pacer = newPortPacer(float64(rate), func(t files.Transfer) (int, bool) { return s.ranks.Load().rank(t) })
	s.pacer.grantAtStart = true
	return s
}

// setPriorities replaces the ranks with those of a command's ingress list
// (its entries already validated). A command older than the last one
// applied, by its non-zero epoch, is ignored.
func (s *ingressServer) setPriorities(epoch uint64, prios []protocol.CoflowPriority) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != 0 && epoch < s.epoch {
		return
	}
	if epoch != 0 {
		s.epoch = epoch
	}
	r := newRankTable(prios, ingressEnd)
	s.ranks.Store(&r)
}

// grant waits until the port grants n bytes of the transfer req names
// (req validated, not Done), which it opens on its first chunk.
func (s *ingressServer) grant(ctx context.Context, req *protocol.IngressRequest) error {
	now := time.Now()
	k := ingressKey{src: req.Src, transfer: req.Transfer}
	s.mu.Lock()
	tr, ok := s.transfers[k]
	if !ok {
		s.arrived++
		tr = &ingressTransfer{seq: s.arrived,
			t: files.Transfer{Framework: string(req.FrameworkID), Coflow: req.CoflowID, Dst: string(req.Src)}}
		s.transfers[k] = tr
	}
	tr.last = now
	tr.asks++
	s.sweepLocked(now)
	if !ok {
		// Opened under s.mu, as end closes it: a chunk asked after the
		// transfer ended finds it closed, one asked before is dropped.
		s.pacer.open(tr.t, tr.seq)
	}
	s.mu.Unlock()
	err := s.pacer.wait(ctx, tr.t, tr.seq, req.Bytes)
	s.mu.Lock()
	tr.asks--
	tr.last = time.Now() // a long wait is not idleness
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.granted.Add(int64(req.Bytes))
	return nil
}

// end forgets a transfer its sender says has ended.
func (s *ingressServer) end(src protocol.AgentID, transfer uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := ingressKey{src: src, transfer: transfer}
	if tr, ok := s.transfers[k]; ok {
		delete(s.transfers, k)
		s.pacer.close(tr.seq)
	}
}

// sweepLocked drops, at most every ingressIdle, the transfers idle that
// long with no chunk waiting. The pacer takes no lock of the server's (its
// ranks are an atomic table), so it is told under s.mu.
func (s *ingressServer) sweepLocked(now time.Time) {
	if now.Sub(s.swept) < ingressIdle {
		return
	}
	s.swept = now
	for k, tr := range s.transfers {
		if tr.asks == 0 && now.Sub(tr.last) >= ingressIdle {
			delete(s.transfers, k)
			s.pacer.close(tr.seq)
		}
	}
}
