package coflowbook

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// keepOrphan holds a report on a flow of a coflow the leader does not
// know, for orphanTTL, within maxOrphans flows.
func (b *Book) keepOrphan(now time.Time, p protocol.FlowProgress) {
	if now.Sub(b.orphanPrune) >= orphanTTL/4 {
		b.pruneOrphans(now)
	}
	k := coflowKey{p.FrameworkID, p.CoflowID}
	pair := [2]protocol.AgentID{p.Src, p.Dst}
	flows := b.orphans[k]
	prev, known := flows[pair]
	if !known && b.orphanCount >= maxOrphans {
		return
	}
	if flows == nil {
		flows = map[[2]protocol.AgentID]orphanProgress{}
		b.orphans[k] = flows
	}
	if !known {
		b.orphanCount++
	}
	flows[pair] = orphanProgress{bytes: max(prev.bytes, p.BytesSent), transfers: max(prev.transfers, p.Transfers),
		done: prev.done || p.Done, at: now}
}

// adoptOrphans applies what was reported of rec's flows before it was
// registered, and forgets it.
func (b *Book) adoptOrphans(rec *coflowRec) {
	flows, ok := b.orphans[rec.key]
	if !ok {
		return
	}
	delete(b.orphans, rec.key)
	b.orphanCount -= len(flows)
	for pair, o := range flows {
		i, ok := rec.index[pair]
		if !ok {
			continue
		}
		f := &rec.flows[i]
		f.bytes, f.transfers = max(f.bytes, o.bytes), max(f.transfers, o.transfers)
		f.done = f.done || o.done || reached(*f)
	}
}

// pruneOrphans forgets reports older than orphanTTL.
func (b *Book) pruneOrphans(now time.Time) {
	b.orphanPrune = now
	for k, flows := range b.orphans {
		for pair, o := range flows {
			if now.Sub(o.at) >= orphanTTL {
				delete(flows, pair)
				b.orphanCount--
			}
		}
		if len(flows) == 0 {
			delete(b.orphans, k)
		}
	}
}
