package jobrunner

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/allot-project/allot/protocol"
)

// leaseKey holds the lease of the active runner: several runners may run
// for one principal, one active and the others waiting for its lease to
// lapse.
const leaseKey = "runner/lease"

// lease is what the active runner writes, and renews, under leaseKey.
type lease struct {
	Holder  string    `json:"holder"`
	Renewed time.Time `json:"renewed"`
}

// acquire waits until this runner holds the lease: at once when nobody
// does, else once the holder has not renewed it for a whole LeaseTTL, as
// this runner's clock measures it (the holder's clock is not trusted). It
// returns the lease's revision.
func (r *Runner) acquire(ctx context.Context) (uint64, error) {
	var seenRev uint64
	var seenAt time.Time
	for {
		item, ok, err := r.store.Get(ctx, leaseKey)
		switch {
		case err != nil:
		case !ok:
			rev, err := r.writeLease(ctx, 0)
			if err == nil {
				return rev, nil
			}
		case item.Revision != seenRev:
			seenRev, seenAt = item.Revision, time.Now()
			var l lease
			if json.Unmarshal(item.Value, &l) == nil && l.Holder == r.id {
				return item.Revision, nil // ours, from before a restart of the loop
			}
			r.log.Info("another runner is active: waiting for its lease to lapse", "holder", holderOf(item.Value))
		case time.Since(seenAt) >= r.cfg.LeaseTTL:
			rev, err := r.writeLease(ctx, seenRev)
			if err == nil {
				r.log.Info("the active runner's lease lapsed: taking over")
				return rev, nil
			}
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, protocol.ErrConflict) {
			r.log.Warn("reading the lease", "error", err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(r.cfg.LeaseTTL / 4):
		}
	}
}

// writeLease writes this runner's lease over revision rev (0: create).
func (r *Runner) writeLease(ctx context.Context, rev uint64) (uint64, error) {
	data, _ := json.Marshal(lease{Holder: r.id, Renewed: time.Now()})
	if rev == 0 {
		return r.store.Create(ctx, leaseKey, data)
	}
	return r.store.Update(ctx, leaseKey, data, rev)
}

func holderOf(data []byte) string {
	var l lease
	_ = json.Unmarshal(data, &l)
	return l.Holder
}
