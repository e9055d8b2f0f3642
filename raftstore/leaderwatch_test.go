package raftstore

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
)

// watchedFake is a Raft server as the leader watch sees it, with the
// connections the watch dials handed to the test.
type watchedFake struct {
	mu         sync.Mutex
	leaderID   string
	leaderAddr string
	contact    time.Time
	candidate  bool
	voterIDs   []string
	hurriedAt  []time.Time
	restored   int
	dialed     []string
	dialErr    error
	peers      chan net.Conn // the leader's ends of the dialed connections
}

func newWatchedFake(leader string, voters ...string) *watchedFake {
	return &watchedFake{leaderID: leader, leaderAddr: leader + ":7000", contact: time.Now(),
		voterIDs: voters, peers: make(chan net.Conn, 8)}
}

func (f *watchedFake) leader() (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leaderID, f.leaderAddr
}

func (f *watchedFake) lastContact() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.contact
}

func (f *watchedFake) follower() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.candidate
}

func (f *watchedFake) voters() ([]string, error) { return f.voterIDs, nil }

func (f *watchedFake) hurry(time.Duration) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hurriedAt = append(f.hurriedAt, time.Now())
	f.leaderID, f.leaderAddr, f.candidate = "", "", true // as Raft does when it stands
	return func() { f.mu.Lock(); f.restored++; f.mu.Unlock() }, nil
}

func (f *watchedFake) dial(_ context.Context, addr string) (net.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dialed = append(f.dialed, addr)
	if f.dialErr != nil {
		return nil, f.dialErr
	}
	ours, theirs := net.Pipe()
	f.peers <- theirs
	return ours, nil
}

func (f *watchedFake) set(fn func(f *watchedFake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *watchedFake) snapshot() (hurried []time.Time, restored int, dialed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.hurriedAt...), f.restored, append([]string(nil), f.dialed...)
}

const watchLease = 450 * time.Millisecond

// startWatch runs a watch of f as node self until the test's bubble ends.
func startWatch(t *testing.T, f *watchedFake, self string) {
	w := newLeaderWatch(f, self, watchLease, hclog.NewNullLogger())
	w.dial = f.dial
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); w.run(stop) }()
	t.Cleanup(func() { close(stop); <-done })
}

// TestLeaderWatch_standsInTurnWhenTheLeaderCloses: when the connection to
// the leader closes, a follower stands once the leader has been silent for
// the lease plus a step per voter before it, then puts the timeouts back
// when a new leader is known.
func TestLeaderWatch_standsInTurnWhenTheLeaderCloses(t *testing.T) {
	for _, tc := range []struct {
		self string
		turn int
		next string // who leads after
	}{{"n2", 0, "n3"}, {"n3", 1, "n2"}} {
		t.Run(tc.self, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newWatchedFake("n1", "n3", "n1", "n2")
				start := f.lastContact()
				startWatch(t, f, tc.self)
				leaderEnd := <-f.peers
				time.Sleep(20 * time.Millisecond)
				_ = leaderEnd.Close() // the leader's process ends
				time.Sleep(2 * watchLease)
				synctest.Wait()
				hurried, restored, _ := f.snapshot()
				want := start.Add(watchLease + time.Duration(tc.turn)*watchLease/4)
				if len(hurried) != 1 || !hurried[0].Equal(want) {
					t.Fatalf("stood at %v, want once at %v (start %v)", hurried, want, start)
				}
				if restored != 0 {
					t.Fatalf("timeouts put back %d times before a new leader is known", restored)
				}
				f.set(func(f *watchedFake) { f.leaderID, f.leaderAddr, f.candidate = tc.next, tc.next+":7000", false })
				time.Sleep(watchLease)
				synctest.Wait()
				if _, restored, dialed := f.snapshot(); restored != 1 || dialed[len(dialed)-1] != tc.next+":7000" {
					t.Fatalf("after a new leader: restored %d times, dialed %v; want once, and the new leader watched", restored, dialed)
				}
			})
		})
	}
}

// TestLeaderWatch_refusedDialIsAGoneLeader: a leader whose port refuses
// connections has no process listening, and a follower stands for it.
func TestLeaderWatch_refusedDialIsAGoneLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newWatchedFake("n1", "n1", "n2", "n3")
		f.dialErr = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		start := f.lastContact()
		startWatch(t, f, "n2")
		time.Sleep(2 * watchLease)
		synctest.Wait()
		if hurried, _, _ := f.snapshot(); len(hurried) != 1 || !hurried[0].Equal(start.Add(watchLease)) {
			t.Fatalf("stood at %v, want once at %v", hurried, start.Add(watchLease))
		}
	})
}

// TestLeaderWatch_noStandWhileTheLeaderSpeaks: a closed connection does not
// make a follower stand while the leader is still heard from; the watch
// dials it again.
func TestLeaderWatch_noStandWhileTheLeaderSpeaks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newWatchedFake("n1", "n1", "n2", "n3")
		startWatch(t, f, "n2")
		_ = (<-f.peers).Close()
		for range 12 {
			time.Sleep(watchLease / 4)
			f.set(func(f *watchedFake) { f.contact = time.Now() })
		}
		synctest.Wait()
		hurried, _, dialed := f.snapshot()
		if len(hurried) != 0 {
			t.Fatalf("stood at %v while the leader spoke", hurried)
		}
		if len(dialed) != 2 {
			t.Fatalf("dialed %v: want the leader watched again once", dialed)
		}
	})
}

// TestLeaderWatch_unreachableIsNotGone: a dial that fails other than by
// refusal says nothing of the leader's process: no stand, however long the
// silence (Raft's own timer is for that), and the watch keeps trying.
func TestLeaderWatch_unreachableIsNotGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newWatchedFake("n1", "n1", "n2", "n3")
		f.dialErr = context.DeadlineExceeded
		startWatch(t, f, "n2")
		time.Sleep(5 * watchLease)
		synctest.Wait()
		hurried, _, dialed := f.snapshot()
		if len(hurried) != 0 {
			t.Fatalf("stood at %v for an unreachable leader", hurried)
		}
		if len(dialed) < 2 {
			t.Fatalf("dialed %v: want retries", dialed)
		}
	})
}

// TestLeaderWatch_followsANewLeader: when another node leads, the watch
// closes its connection to the old one and watches the new one.
func TestLeaderWatch_followsANewLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newWatchedFake("n1", "n1", "n2", "n3")
		startWatch(t, f, "n2")
		old := <-f.peers
		f.set(func(f *watchedFake) { f.leaderID, f.leaderAddr = "n3", "n3:7000" })
		if _, err := old.Read(make([]byte, 1)); err == nil {
			t.Fatal("the connection to the old leader is still open")
		}
		newer := <-f.peers
		defer newer.Close()
		if _, _, dialed := f.snapshot(); fmt.Sprint(dialed) != "[n1:7000 n3:7000]" {
			t.Fatalf("dialed %v", dialed)
		}
		if hurried, _, _ := f.snapshot(); len(hurried) != 0 {
			t.Fatalf("stood at %v on a change of leader", hurried)
		}
	})
}

// TestLeaderWatch_notAVoter: a node outside the voters never stands.
func TestLeaderWatch_notAVoter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newWatchedFake("n1", "n1", "n2", "n3")
		startWatch(t, f, "n9")
		_ = (<-f.peers).Close()
		time.Sleep(3 * watchLease)
		synctest.Wait()
		if hurried, _, _ := f.snapshot(); len(hurried) != 0 {
			t.Fatalf("a non-voter stood at %v", hurried)
		}
	})
}
