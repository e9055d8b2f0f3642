package executor

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/protocol"
)

// This file holds the shuffle progress reports: what the agent has sent
// of each flow (framework, coflow, dst), in total, goes to the leader
// while transfers run and once they end, at most every
// Config.ShuffleReportInterval (Aalo learns a coflow's size from these in
// flight; Philae samples pilot flows from them). One
// goroutine sends them; a report carries every flow changed since the
// last one that got through, so reports that pile up while the leader is
// away coalesce into one.

// Bounds of the reporter's memory: a flow is forgotten once reported and
// unchanged for shuffleForget, and the map holds maxShuffleFlows flows at
// most.
const (
	shuffleForget     = 10 * time.Minute
	maxShuffleFlows   = 10000
	shufflePruneEvery = time.Minute
)

// shuffleReporter holds the flows' totals until they are reported.
type shuffleReporter struct {
	mu    sync.Mutex
	flows map[files.Transfer]*flowStat
	// changes numbers the changes, so that a report acknowledges only the
	// totals it carried, not those changed while it was on its way.
	changes uint64
	wake    chan struct{}
	// completed is signalled when a transfer completes: its report does not
	// wait out the interval (Philae's coordinator learns from completions,
	// and a framework may end its job right after its last fetch).
	completed chan struct{}
}

// flowStat is one flow's totals: version is the number of its latest
// change, reported that of the latest change the leader got.
type flowStat struct {
	bytes     int64
	transfers int
	version   uint64
	reported  uint64
	changed   time.Time
}

// flowReport is a flow's totals as of one change.
type flowReport struct {
	key       files.Transfer
	version   uint64
	bytes     int64
	transfers int
}

func newShuffleReporter() *shuffleReporter {
	return &shuffleReporter{flows: map[files.Transfer]*flowStat{}, wake: make(chan struct{}, 1), completed: make(chan struct{}, 1)}
}

// progress adds bytes a transfer sent to its flow's totals, and wakes
// the sender.
func (r *shuffleReporter) progress(t files.Transfer, bytes int64) { r.record(t, bytes, false) }

// ended counts a transfer that completed in its flow's totals, and wakes
// the sender; its bytes were counted as it sent them.
func (r *shuffleReporter) ended(t files.Transfer, ok bool) {
	if ok {
		r.record(t, 0, true)
		select {
		case r.completed <- struct{}{}:
		default:
		}
	}
}

// record adds bytes to a flow's totals, and a completed transfer when ok,
// and wakes the sender.
func (r *shuffleReporter) record(t files.Transfer, bytes int64, ok bool) {
	now := time.Now()
	r.mu.Lock()
	f, found := r.flows[t]
	if !found {
		if len(r.flows) >= maxShuffleFlows {
			r.evictLocked()
		}
		f = &flowStat{}
		r.flows[t] = f
	}
	f.bytes += bytes
	if ok {
		f.transfers++
	}
	r.changes++
	f.version, f.changed = r.changes, now
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// evictLocked makes room by forgetting a tenth of the flows, the oldest
// reported ones first: at most that many evictions sort the map once.
// Unreported ones go only when there are not enough of those, which takes
// a leader unreachable for a long while.
func (r *shuffleReporter) evictLocked() {
	keys := make([]files.Transfer, 0, len(r.flows))
	for k := range r.flows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b files.Transfer) int {
		fa, fb := r.flows[a], r.flows[b]
		if da, db := fa.version > fa.reported, fb.version > fb.reported; da != db {
			if da {
				return 1
			}
			return -1
		}
		return cmp.Compare(fa.version, fb.version) // the order of their latest changes
	})
	for _, k := range keys[:max(1, maxShuffleFlows/10)] {
		delete(r.flows, k)
	}
}

// prune forgets the flows reported and unchanged since before forget.
func (r *shuffleReporter) prune(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, f := range r.flows {
		if f.version == f.reported && now.Sub(f.changed) >= shuffleForget {
			delete(r.flows, k)
		}
	}
}

// leaderChanged marks every flow unreported and wakes the sender: the
// coflow state is the leader's memory only, so a new leader learns what
// was sent from the agents (it keeps what arrives before the frameworks
// register their coflows again).
func (r *shuffleReporter) leaderChanged() {
	r.mu.Lock()
	n := 0
	for _, f := range r.flows {
		if f.reported > 0 {
			f.reported = 0
			n++
		}
	}
	r.mu.Unlock()
	if n > 0 {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// pending returns the flows changed since their last report, in a fixed
// order.
func (r *shuffleReporter) pending() []flowReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []flowReport
	for k, f := range r.flows {
		if f.version > f.reported {
			out = append(out, flowReport{key: k, version: f.version, bytes: f.bytes, transfers: f.transfers})
		}
	}
	slices.SortFunc(out, func(a, b flowReport) int { return cmp.Compare(a.version, b.version) })
	return out
}

// reported records that the leader got (or will never take) these totals.
func (r *shuffleReporter) reported(reports []flowReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range reports {
		if f, ok := r.flows[p.key]; ok && p.version > f.reported {
			f.reported = p.version
		}
	}
}

// shuffleReportLoop sends the flows' progress as transfers send and end,
// at most every Config.ShuffleReportInterval, and now and then forgets
// flows long reported.
func (a *Agent) shuffleReportLoop(ctx context.Context) {
	defer a.wg.Done()
	r := a.shuffle.report
	tick := time.NewTicker(shufflePruneEvery)
	defer tick.Stop()
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case now := <-tick.C:
			r.prune(now)
		}
		a.sendShuffleReports(ctx)
		sent := time.Now()
		// What changes meanwhile waits in r.wake for the next report; a
		// completed transfer only for completionGap, which gathers a burst
		// of them into one report.
		gap.Reset(a.cfg.ShuffleReportInterval)
		select {
		case <-ctx.Done():
			return
		case <-gap.C:
		case <-r.completed:
			gap.Reset(completionGap - time.Since(sent))
			select {
			case <-ctx.Done():
				return
			case <-gap.C:
			}
		}
	}
}

// completionGap is the least time between a report and the next one
// carrying a completed transfer.
const completionGap = 5 * time.Millisecond

// sendShuffleReports reports every flow changed since its last report,
// protocol.MaxListLen flows a request, retrying while no leader answers.
// A report the leader refuses is dropped: the totals are cumulative, so
// the next report of the flow makes up for it.
func (a *Agent) sendShuffleReports(ctx context.Context) {
	r := a.shuffle.report
	pend := r.pending()
	if len(pend) == 0 {
		return
	}
	id := a.ID()
	if id == "" {
		// Not registered yet; the next report, or the next tick, sends them.
		a.log.Debug("coflow progress held until the agent has an id", "flows", len(pend))
		return
	}
	for chunk := range slices.Chunk(pend, protocol.MaxListLen) {
		req := protocol.CoflowReportRequest{AgentID: id, Flows: make([]protocol.FlowProgress, len(chunk))}
		for i, p := range chunk {
			req.Flows[i] = protocol.FlowProgress{
				FrameworkID: protocol.FrameworkID(p.key.Framework), CoflowID: p.key.Coflow,
				Src: id, Dst: protocol.AgentID(p.key.Dst), BytesSent: p.bytes, Transfers: p.transfers,
			}
		}
		err := a.req.retry(ctx, protocol.MsgCoflowReportRequest, req, nil)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return
		default:
			a.log.Warn("coflow progress report refused; dropped", "flows", len(chunk), "error", err)
		}
		r.reported(chunk)
	}
}
