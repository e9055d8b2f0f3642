package master

import (
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// This file holds the resends of launches to agents. A launch command is
// published once, and NATS delivers it at most once: one in flight when
// its agent's NATS server went away (the server of a master killed with
// it), or while the agent reconnected, is gone, and the task would stay
// STAGING, its resources held, with nothing to end it. So the leader sends
// a launch again when the agent has reported nothing of the task for
// Config.StatusRetryInterval since the launch, then with doubling waits up
// to maxStatusRetryWait, as it resends status updates to frameworks
// (status_retry.go). An agent ignores a launch of a task it already has:
// one that received the first launch reports its status all the same.

// launchRetry is when one unanswered launch is sent again next.
type launchRetry struct {
	next time.Time
	wait time.Duration
}

// launchRetries is the leader's memory of the launches it resends; only
// retryLaunches, never two at once, touches it.
type launchRetries struct {
	scanned time.Time
	due     map[frameworkTask]launchRetry
}

// retryLaunches resends the launches due again at now and returns how many
// tasks it sent again. It looks through the tasks at most twice per first
// interval, as that walks every task the state holds.
func (l *leader) retryLaunches(now time.Time) int {
	r, first := &l.launchRetries, l.retries.first
	if now.Sub(r.scanned) < first/2 {
		return 0
	}
	r.scanned = now
	var late []*state.Task
	next := make(map[frameworkTask]launchRetry, len(r.due))
	for _, t := range l.view().Tasks() {
		if t.State != protocol.TaskStaging {
			continue
		}
		k := frameworkTask{t.FrameworkID, t.ID}
		e, ok := r.due[k]
		if !ok {
			e = launchRetry{next: time.Unix(0, t.LaunchedAt).Add(first), wait: first}
		}
		if !now.Before(e.next) {
			late = append(late, t)
			e.wait = nextRetryWait(e.wait, first)
			e.next = now.Add(e.wait)
		}
		next[k] = e
	}
	r.due = next
	if len(late) > 0 {
		l.logger.Info("launches sent again: their agents reported nothing of them", "count", len(late),
			"first_task", late[0].ID, "first_agent", late[0].AgentID)
		l.resendLaunches(late)
		l.metrics.launchesResent(len(late))
	}
	return len(late)
}
