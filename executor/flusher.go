package executor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// This file holds the flusher, which writes task record changes to the
// journal off the task store's lock, many at once (group commit).
//
// Every change of a task record is numbered (recordLog.seq) and queued by
// persistLocked; the task remembers the number of its latest change
// (task.version). The flusher takes everything queued, appends it with one
// write and one fsync, and then declares every change up to the last one
// it took durable (recordLog.durable). Changes queued while it wrote go into
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

// recordLog is the task records' way to disk: the queue of their changes
// (one entry per record name at most: the latest replaces one queued
// before it), their numbering, the flusher that appends them to the
// journal, and what is durable. It belongs to the task store
// (task_store.go), and its lock is a leaf: the store queues and asks under
// its own lock, and recordLog never calls back into the agent while
// holding its lock.
type recordLog struct {
	log hclog.Logger
	// committedHook runs after each commit, off the lock: it wakes the
	// status sender.
	committedHook func()

	mu        sync.Mutex
	pending   []journalEntry
	pendingAt map[string]int
	// seq numbers the record changes; those up to durable are on disk
	// (written under mu, read without it by the sender's checks).
	// committed is closed, and replaced, whenever durable advances.
	seq       uint64
	durable   atomic.Uint64
	committed chan struct{}

	// journal is owned by the flusher from start to stop; wake wakes it,
	// closing stop stops it, and done is closed once it has stopped.
	journal *journal
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

func newRecordLog(log hclog.Logger, committed func()) *recordLog {
	return &recordLog{log: log, committedHook: committed, pendingAt: map[string]int{}, committed: make(chan struct{}),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// queue queues a journal entry, replacing one queued for the same record,
// and numbers the change; it returns the change's number.
func (r *recordLog) queue(e journalEntry) uint64 {
	r.mu.Lock()
	r.seq++
	seq := r.seq
	if i, ok := r.pendingAt[e.name]; ok {
		r.pending[i] = e
	} else {
		r.pendingAt[e.name] = len(r.pending)
		r.pending = append(r.pending, e)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return seq
}

// last is the number of the latest change queued.
func (r *recordLog) last() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// isDurable reports whether the change numbered version is on disk.
func (r *recordLog) isDurable(version uint64) bool { return version <= r.durable.Load() }

// startFlusher hands the journal to the flusher and starts it. stopFlusher
// stops it.
func (a *Agent) startFlusher(j *journal) { a.tasks.records.start(j) }

// stopFlusher writes what is still queued, stops the flusher and closes
// the journal. It must run after every goroutine that changes task
// records has ended; it does nothing if the flusher never started.
func (a *Agent) stopFlusher() { a.tasks.records.close() }

// waitDurable waits until every record change numbered seq or lower is on
// disk, the flusher stopped, or ctx is done.
func (a *Agent) waitDurable(ctx context.Context, seq uint64) error {
	return a.tasks.records.waitDurable(ctx, seq)
}

func (r *recordLog) start(j *journal) {
	r.journal = j
	go r.loop()
}

func (r *recordLog) close() {
	if r.journal == nil {
		return
	}
	close(r.stop)
	<-r.done
	r.journal.close()
}

func (r *recordLog) loop() {
	defer close(r.done)
	for {
		select {
		case <-r.wake:
			r.commit()
		case <-r.stop:
			r.commit()
			return
		}
	}
}

// commit appends every queued entry to the journal, declares those
// changes durable and wakes the sender and whoever waits for them.
func (r *recordLog) commit() {
	r.mu.Lock()
	batch, seq := r.pending, r.seq
	r.pending, r.pendingAt = nil, map[string]int{}
	r.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if err := r.journal.append(batch); err != nil {
		r.log.Error("checkpoint tasks", "records", len(batch), "error", err)
	}
	r.mu.Lock()
	r.durable.Store(seq)
	close(r.committed)
	r.committed = make(chan struct{})
	r.mu.Unlock()
	r.committedHook()
}

func (r *recordLog) waitDurable(ctx context.Context, seq uint64) error {
	for {
		r.mu.Lock()
		done, ch := r.durable.Load() >= seq, r.committed
		r.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-r.done:
			if !r.isDurable(seq) {
				return fmt.Errorf("%w: the agent stopped before the task records were written", ErrCheckpoint)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
