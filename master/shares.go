package master

import (
	"maps"
	"time"

	"github.com/allot-project/allot/protocol"
)

// shareUpdates remembers the fair share last sent to each framework, so
// the leader sends a ShareUpdateEvent only when a share changes. It is
// leader soft state: a new leader sends every framework its share again.
type shareUpdates struct {
	sent      map[protocol.FrameworkID]protocol.Resources
	lastCheck time.Time
	// due asks for a check in the next round, interval or not: a framework
	// that has no share yet declared demand or revived, and its planner
	// should not wait a whole interval for its share.
	due bool
}

// declared notes that id declared demand or revived: if it has no share
// yet, it may have one now.
func (s *shareUpdates) declared(id protocol.FrameworkID) {
	if _, ok := s.sent[id]; !ok {
		s.due = true
	}
}

// forget makes the next check send id its share again (it subscribed anew
// and has forgotten it).
func (s *shareUpdates) forget(id protocol.FrameworkID) { delete(s.sent, id) }

// sendShareUpdates recomputes the fair shares, at most once per
// ShareUpdateInterval unless a framework without a share has declared
// demand, and tells each listening framework whose share changed. A framework that had a share and lost it (it withdrew its
// demand) is told so with an empty FairShare.
func (l *leader) sendShareUpdates(now time.Time) {
	l.mu.Lock()
	if !l.shares.due && !l.shares.lastCheck.IsZero() && now.Sub(l.shares.lastCheck) < l.cfg.ShareUpdateInterval {
		l.mu.Unlock()
		return
	}
	l.shares.lastCheck, l.shares.due = now, false
	fair := l.alloc.FairShares()
	var events []protocol.ShareUpdateEvent
	var to []protocol.FrameworkID
	changed := func(id protocol.FrameworkID, share protocol.Resources) {
		if _, waiting := l.opening[id]; waiting {
			// Not listening yet: it gets the share once it is, in the
			// next round if it has never had one.
			if _, ok := l.shares.sent[id]; !ok {
				l.shares.due = true
			}
			return
		}
		shares, dom, err := l.alloc.FrameworkShares(id)
		if err != nil {
			delete(l.shares.sent, id) // gone
			return
		}
		ev := protocol.ShareUpdateEvent{DominantShare: dom, Shares: shares, FairShare: maps.Clone(share.Scalars)}
		if fw, ok := l.view().Framework(id); ok {
			ev.Role = fw.Role
		}
		l.shares.sent[id] = share
		events = append(events, ev)
		to = append(to, id)
	}
	for id, share := range fair {
		if old, ok := l.shares.sent[id]; !ok || !old.Equal(share) {
			changed(id, share)
		}
	}
	for id, old := range maps.Clone(l.shares.sent) {
		if _, ok := fair[id]; !ok && !old.IsEmpty() {
			changed(id, protocol.Resources{})
		}
	}
	l.mu.Unlock()
	for i, id := range to {
		l.publishFramework(id, protocol.MsgShareUpdateEvent, events[i])
	}
}
