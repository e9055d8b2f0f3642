package master

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// This file holds the retries of status updates to frameworks. A NATS
// event is delivered at most once: an update published while a connection
// blinks, or while a route between NATS servers is down, is gone, and the
// framework would otherwise see it only at its next subscribe or
// reconciliation. So the leader resends every status a connected framework
// has not acknowledged, first Config.StatusRetryInterval after it saw it
// unacknowledged and then with doubling waits up to maxStatusRetryWait, as
// a Mesos agent retries its updates until the scheduler acknowledges them.
// Of a task's unacknowledged statuses only the oldest is resent: they go
// out in order, one at a time.
// The SDK drops the duplicates (and acknowledges them again).

// maxStatusRetryWait caps the wait between two resends of one status
// (unless the first wait is longer).
const maxStatusRetryWait = 10 * time.Minute

// nextRetryWait is the wait after a resend that followed a wait of wait:
// twice as long, up to maxStatusRetryWait (or first, if that is longer).
func nextRetryWait(wait, first time.Duration) time.Duration {
	return min(2*wait, max(maxStatusRetryWait, first))
}

// statusRetry is when one unacknowledged status is resent next.
type statusRetry struct {
	uuid protocol.StatusUUID
	next time.Time
	wait time.Duration
}

// frameworkTask names a task of a framework.
type frameworkTask struct {
	framework protocol.FrameworkID
	task      protocol.TaskID
}

// statusRetries is the leader's memory of the unacknowledged statuses it
// watches; only retryStatuses, never two at once, touches it.
type statusRetries struct {
	first time.Duration
	due   map[frameworkTask]statusRetry
}

// statusRetryScan is how often the leader looks for statuses due again.
func statusRetryScan(first time.Duration) time.Duration {
	return max(first/4, 10*time.Millisecond)
}

// retryStatuses resends the statuses due again at now and returns how many
// it sent. A status seen unacknowledged for the first time (just sent, or
// replaced by a newer one) waits a whole first interval. Disconnected
// frameworks are skipped: a subscribe sends them all (resendUnacked).
func (l *leader) retryStatuses(now time.Time) int {
	r := &l.retries
	v := l.view()
	next := make(map[frameworkTask]statusRetry, len(r.due))
	sent := 0
	for _, f := range v.Frameworks() {
		if !f.Connected {
			continue
		}
		for _, t := range v.UnackedTasks(f.ID) {
			st, _ := t.Pending()
			k := frameworkTask{f.ID, t.ID}
			e, ok := r.due[k]
			switch {
			case !ok || e.uuid != st.UUID:
				e = statusRetry{uuid: st.UUID, next: now.Add(r.first), wait: r.first}
			case !now.Before(e.next):
				l.publishStatus(st)
				sent++
				e.wait = nextRetryWait(e.wait, r.first)
				e.next = now.Add(e.wait)
			}
			next[k] = e
		}
	}
	r.due = next
	if sent > 0 {
		l.logger.Debug("status updates resent", "count", sent)
		l.metrics.statusesResent(sent)
	}
	return sent
}
