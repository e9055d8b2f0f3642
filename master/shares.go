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
}

// forget makes the next check send id its share again (it subscribed anew
// and has forgotten it).
func (s *shareUpdates) forget(id protocol.FrameworkID) { delete(s.sent, id) }

// sendShareUpdates recomputes the fair shares, at most once per
// ShareUpdateInterval, and tells each listening framework whose share
// changed. A framework that had a share and lost it (it withdrew its
// demand) is told so with an empty FairShare.
func (l *leader) sendShareUpdates(now time.Time) {
	l.mu.Lock()
	if !l.shares.lastCheck.IsZero() && now.Sub(l.shares.lastCheck) < l.m.cfg.ShareUpdateInterval {
		l.mu.Unlock()
		return
	}
	l.shares.lastCheck = now
	fair := l.alloc.FairShares()
	var events []protocol.ShareUpdateEvent
	var to []protocol.FrameworkID
	changed := func(id protocol.FrameworkID, share protocol.Resources) {
		if _, waiting := l.opening[id]; waiting {
			return // not listening yet: it gets the share once it is
		}
		shares, dom, err := l.alloc.FrameworkShares(id)
		if err != nil {
			delete(l.shares.sent, id) // gone
			return
		}
		ev := protocol.ShareUpdateEvent{DominantShare: dom, Shares: shares, FairShare: maps.Clone(share.Scalars)}
		if fw, ok := l.m.View().Framework(id); ok {
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
		subject, err := l.subj.FrameworkEvents(id)
		if err != nil {
			continue
		}
		l.publish(subject, protocol.MsgShareUpdateEvent, events[i])
	}
}
