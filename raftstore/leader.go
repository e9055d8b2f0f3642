package raftstore

import "sync"

// leaderNotifier turns Raft's leadership notifications into a channel that never blocks
// Raft: Raft writes to in, which run drains at once; out holds only the latest state.
type leaderNotifier struct {
	in  chan bool // raft.Config.NotifyCh
	out chan bool // LeaderChanges; capacity 1, latest value wins

	mu   sync.Mutex // serializes publish (run, then Shutdown's final false)
	last bool       // last state published
}

func newLeaderNotifier() *leaderNotifier {
	return &leaderNotifier{
		in:  make(chan bool, 8),
		out: make(chan bool, 1),
	}
}

// run forwards notifications until stop is closed.
func (l *leaderNotifier) run(stop <-chan struct{}) {
	for {
		select {
		case v := <-l.in:
			l.publish(v)
		case <-stop:
			return
		}
	}
}

// publish replaces any unread value in out with v. Only publish sends on out, under mu,
// so after emptying the buffer the send cannot block.
func (l *leaderNotifier) publish(v bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = v
	select {
	case <-l.out:
	default:
	}
	l.out <- v
}

// stepDown publishes false if the last published state was true.
func (l *leaderNotifier) stepDown() {
	l.mu.Lock()
	was := l.last
	l.mu.Unlock()
	if was {
		l.publish(false)
	}
}
