package executor

import (
	"context"
	"fmt"
)

// This file holds the flusher, which writes task record changes to the
// journal off the agent's lock, many at once (group commit).
//
// Every change of a task record is numbered (Agent.seq) and queued by
// persistLocked; the task remembers the number of its latest change
// (task.version). The flusher takes everything queued, appends it with one
// write and one fsync, and then declares every change up to the last one
// it took durable (Agent.durable). Changes queued while it wrote go into
// the next append. A status update is sent only once its task's latest
// change is durable, and a reregistration (which reports the tasks'
// statuses) waits until every change made before it is: the master never
// learns of an update the disk does not hold, and so a crash loses no
// update that was sent. One counter serves all tasks because a commit
// always covers a prefix of the numbered changes, so a single number says
// what is on disk, to the sender and to a reregistration alike. A task
// whose latest change is not on disk waits whole, even when the updates
// already queued before it are: it waits one commit at most, and the
// sender needs no per-update bookkeeping.
//
// A failed write is logged, and the changes it held are declared durable
// all the same: the agent keeps reporting its tasks, and only a crash
// before the journal is next written (it is then rewritten whole) can lose
// them. Holding every status update back while the disk refuses writes (a
// full disk, say) would instead leave the masters and frameworks blind to
// the agent's tasks for as long as it lasts. The checkpoint is thus best
// effort against write errors, and exact against crashes.

// queueLocked queues a journal entry, replacing one queued for the same
// record, numbers the change, records it as t's latest (t may be nil) and
// wakes the flusher.
func (a *Agent) queueLocked(t *task, e journalEntry) {
	a.seq++
	if t != nil {
		t.version = a.seq
	}
	if i, ok := a.pendingAt[e.name]; ok {
		a.pending[i] = e
	} else {
		a.pendingAt[e.name] = len(a.pending)
		a.pending = append(a.pending, e)
	}
	select {
	case a.ckptWake <- struct{}{}:
	default:
	}
}

// durableLocked reports whether t's latest record change is on disk.
func (a *Agent) durableLocked(t *task) bool { return t.version <= a.durable }

// startFlusher hands the journal to the flusher and starts it. stopFlusher
// stops it.
func (a *Agent) startFlusher(j *journal) {
	a.journal = j
	go a.flushLoop()
}

// stopFlusher writes what is still queued, stops the flusher and closes
// the journal. It must run after every goroutine that changes task
// records has ended; it does nothing if the flusher never started.
func (a *Agent) stopFlusher() {
	if a.journal == nil {
		return
	}
	close(a.ckptStop)
	<-a.ckptDone
	a.journal.close()
}

func (a *Agent) flushLoop() {
	defer close(a.ckptDone)
	for {
		select {
		case <-a.ckptWake:
			a.commitCheckpoint()
		case <-a.ckptStop:
			a.commitCheckpoint()
			return
		}
	}
}

// commitCheckpoint appends every queued entry to the journal, declares
// those changes durable and wakes the sender and whoever waits for them.
func (a *Agent) commitCheckpoint() {
	a.mu.Lock()
	batch, seq := a.pending, a.seq
	a.pending, a.pendingAt = nil, map[string]int{}
	a.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if err := a.journal.append(batch); err != nil {
		a.log.Error("checkpoint tasks", "records", len(batch), "error", err)
	}
	a.mu.Lock()
	a.durable = seq
	close(a.committed)
	a.committed = make(chan struct{})
	a.mu.Unlock()
	a.kick()
}

// waitDurable waits until every record change numbered seq or lower is on
// disk, the flusher stopped, or ctx is done.
func (a *Agent) waitDurable(ctx context.Context, seq uint64) error {
	for {
		a.mu.Lock()
		done, ch := a.durable >= seq, a.committed
		a.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-a.ckptDone:
			a.mu.Lock()
			done = a.durable >= seq
			a.mu.Unlock()
			if !done {
				return fmt.Errorf("%w: the agent stopped before the task records were written", ErrCheckpoint)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
