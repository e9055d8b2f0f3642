package raftstore

import (
	"context"
	"errors"
	"net"
	"slices"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// leaderWatch lets a follower learn at once that its leader's process has
// ended, instead of from a heartbeat timeout of silence followed by a
// random wait of up to one more. It holds a TCP connection open to the
// leader's Raft address and sends nothing on it (the leader's transport
// waits for a command that never comes). When the leader's process exits
// its kernel closes the connection; a refused dial says the same.
//
// The follower then stands for election once the leader has been silent
// for the leader lease (the least heartbeat timeout Raft accepts), one
// step later for each voter whose ID sorts before its own, so that two
// followers do not stand at the same instant and split the vote: the
// first to stand forgets the leader and grants the next one's pre-vote.
//
// A closed connection is only a hint. A follower stands only after the
// lease's silence, and with pre-vote one that stands while the leader
// lives is refused by the others and disturbs nothing. A leader whose
// machine dies or is cut off closes nothing; the heartbeat timeout finds
// it as before.
type leaderWatch struct {
	raft   watchedRaft
	self   string
	dial   func(ctx context.Context, addr string) (net.Conn, error)
	lease  time.Duration // the silence after which a follower may stand
	step   time.Duration // between voters' turns to stand
	poll   time.Duration // how often a change of leader is looked for
	settle time.Duration // the longest the election timeouts stay shortened
	logger hclog.Logger
}

// watchedRaft is what the watch reads from and does to its Raft server.
type watchedRaft interface {
	leader() (id, addr string)
	lastContact() time.Time
	follower() bool
	voters() ([]string, error)
	// hurry shortens the heartbeat and election timeouts to d, so that a
	// follower silent for d stands at once and a candidate retries within
	// d to 2d, until restore is called.
	hurry(d time.Duration) (restore func(), err error)
}

func newLeaderWatch(r watchedRaft, self string, lease time.Duration, logger hclog.Logger) *leaderWatch {
	dialer := &net.Dialer{}
	return &leaderWatch{
		raft:   r,
		self:   self,
		dial:   func(ctx context.Context, addr string) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", addr) },
		lease:  lease,
		step:   lease / 4,
		poll:   lease / 10,
		settle: 20 * lease,
		logger: logger,
	}
}

// run watches until stop is closed.
func (w *leaderWatch) run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for ctx.Err() == nil {
		id, addr := w.raft.leader()
		if id == "" || id == w.self {
			sleep(ctx, w.poll)
			continue
		}
		if w.watch(ctx, id, addr) {
			w.standAfterSilence(ctx, id)
		}
	}
}

// watch holds a connection to leader id at addr. It reports true when the
// connection closes or is refused while id still leads, false when the
// leader changes, the watch stops, or the dial fails in a way that says
// nothing about the leader's process.
func (w *leaderWatch) watch(ctx context.Context, id, addr string) bool {
	dctx, cancel := context.WithTimeout(ctx, w.lease)
	conn, err := w.dial(dctx, addr)
	cancel()
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			w.logger.Debug("leader refuses connections", "leader", id, "error", err)
			return w.stillLeads(id)
		}
		w.logger.Debug("cannot reach the leader", "leader", id, "error", err)
		sleep(ctx, w.poll)
		return false
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		buf := make([]byte, 64)
		for {
			if _, err := conn.Read(buf); err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	for {
		select {
		case <-closed:
			_ = conn.Close()
			w.logger.Debug("connection to the leader closed", "leader", id)
			return w.stillLeads(id)
		case <-tick.C:
			if !w.stillLeads(id) {
				_ = conn.Close()
				<-closed
				return false
			}
		case <-ctx.Done():
			_ = conn.Close()
			<-closed
			return false
		}
	}
}

func (w *leaderWatch) stillLeads(id string) bool {
	cur, _ := w.raft.leader()
	return cur == id
}

// standAfterSilence waits for this follower's turn after the gone leader's
// last word and then makes it stand for election, unless the leader spoke
// again, another leader is known, or it already stands.
func (w *leaderWatch) standAfterSilence(ctx context.Context, gone string) {
	rank, err := w.rank(gone)
	if err != nil {
		w.logger.Debug("no turn to stand", "leader", gone, "error", err)
		return
	}
	last := w.raft.lastContact()
	if !sleep(ctx, time.Until(last.Add(w.lease+time.Duration(rank)*w.step))) {
		return
	}
	if !w.stillLeads(gone) || !w.raft.follower() || w.raft.lastContact().After(last) {
		return
	}
	restore, err := w.raft.hurry(w.lease)
	if err != nil {
		w.logger.Warn("could not stand for election", "leader", gone, "error", err)
		return
	}
	w.logger.Info("leader's process gone; standing for election", "leader", gone,
		"silent_for", time.Since(last).Round(time.Millisecond), "turn", rank)
	w.awaitNewLeader(ctx, gone, last)
	restore()
}

// awaitNewLeader returns once a leader other than gone is known, gone is
// heard from again, the watch stops, or settle has passed.
func (w *leaderWatch) awaitNewLeader(ctx context.Context, gone string, last time.Time) {
	deadline := time.Now().Add(w.settle)
	for time.Now().Before(deadline) && sleep(ctx, w.poll) {
		if id, _ := w.raft.leader(); (id != "" && id != gone) || w.raft.lastContact().After(last) {
			return
		}
	}
}

// rank is this node's place among the voters other than gone, in ID order.
func (w *leaderWatch) rank(gone string) (int, error) {
	voters, err := w.raft.voters()
	if err != nil {
		return 0, err
	}
	voters = slices.DeleteFunc(slices.Clone(voters), func(id string) bool { return id == gone })
	slices.Sort(voters)
	i := slices.Index(voters, w.self)
	if i < 0 {
		return 0, errors.New("this node is not a voter")
	}
	return i, nil
}

// sleep waits d or until ctx is done, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
