package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

func (d *Driver) decline(ctx context.Context, offerIDs []protocol.OfferID, f *protocol.Filters, leftover bool) error {
	id, req, err := d.session()
	if err != nil {
		return err
	}
	if len(offerIDs) == 0 {
		return nil
	}
	// The agent of each offer the driver knows, for the refusals it
	// remembers and for declining agent by agent should that be needed.
	d.mu.Lock()
	agentOf := make(map[protocol.OfferID]protocol.AgentID, len(offerIDs))
	for _, oid := range offerIDs {
		if o, ok := d.outstanding[oid]; ok {
			agentOf[oid] = o.AgentID
		}
	}
	d.dropOffersLocked(offerIDs)
	if f != nil && f.RefuseSeconds > 0 {
		until := time.Now().Add(time.Duration(f.RefuseSeconds * float64(time.Second)))
		for _, ag := range agentOf {
			if until.After(d.refusals[ag]) {
				d.refusals[ag] = until
			}
		}
	}
	d.mu.Unlock()
	// One request names them all (the master refuses every agent named);
	// should one offer be gone already, which fails the whole request, the
	// rest go again agent by agent, so that one stale offer does not leave
	// the others held.
	var errs []error
	for chunk := range slices.Chunk(offerIDs, protocol.MaxOffersPerRequest) {
		r := protocol.DeclineRequest{FrameworkID: id, OfferIDs: chunk, Filters: f, Leftover: leftover}
		switch err := req.retry(ctx, protocol.VerbDecline, r, nil, isUnknownOffer); {
		case err == nil:
		case !isUnknownOffer(err):
			errs = append(errs, d.checkFatal(fmt.Errorf("decline %d offers: %w", len(chunk), err)))
		default:
			if groups := byAgent(chunk, agentOf); len(groups) > 1 {
				errs = append(errs, d.declineByAgent(ctx, req, id, groups, f, leftover)...)
			} else {
				d.logger.Debug("declined offers were already gone", "offer_ids", chunk, "error", err)
			}
		}
	}
	return errors.Join(errs...)
}

// byAgent groups offer IDs by the agent agentOf names; offers it does not
// know go alone.
func byAgent(ids []protocol.OfferID, agentOf map[protocol.OfferID]protocol.AgentID) [][]protocol.OfferID {
	var groups [][]protocol.OfferID
	index := map[protocol.AgentID]int{}
	for _, oid := range ids {
		ag, ok := agentOf[oid]
		if !ok {
			groups = append(groups, []protocol.OfferID{oid})
			continue
		}
		i, seen := index[ag]
		if !seen {
			i = len(groups)
			index[ag] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], oid)
	}
	return groups
}

// declineByAgent declines each agent's offers on their own, skipping those
// gone already.
func (d *Driver) declineByAgent(ctx context.Context, req requester, id protocol.FrameworkID, groups [][]protocol.OfferID, f *protocol.Filters, leftover bool) []error {
	var errs []error
	for _, g := range groups {
		r := protocol.DeclineRequest{FrameworkID: id, OfferIDs: g, Filters: f, Leftover: leftover}
		err := req.retry(ctx, protocol.VerbDecline, r, nil, isUnknownOffer)
		if isUnknownOffer(err) {
			// The offers are gone already (rescinded, or made by a leader
			// since replaced): what a decline wants, as Mesos treats it.
			d.logger.Debug("declined offers were already gone", "offer_ids", g, "error", err)
			continue
		}
		if err != nil {
			errs = append(errs, d.checkFatal(fmt.Errorf("decline %v: %w", g, err)))
		}
	}
	return errs
}
