package master

import (
	"time"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// allocate runs one round and sends its offers and rescinds.
func (l *leader) allocate(now time.Time) {
	l.mu.Lock()
	d := l.alloc.Allocate(now)
	l.mu.Unlock()
	// Offers are counted before they go out, so that anyone who received
	// one finds it counted.
	l.metrics.offered(len(d.Offers))
	defer func() { l.metrics.round(time.Since(now)) }()
	l.sendRescinds(d.Rescinds)
	// Shares go out before the offers, so a planner sees its new share
	// before it decides what to do with them.
	l.sendShareUpdates(now)
	byFramework := map[protocol.FrameworkID][]protocol.Offer{}
	var order []protocol.FrameworkID
	view := l.view()
	for _, o := range d.Offers {
		if _, ok := byFramework[o.FrameworkID]; !ok {
			order = append(order, o.FrameworkID)
		}
		w := wireOffer(o)
		if ag, ok := view.Agent(o.AgentID); ok {
			w.Addresses.HTTP = ag.HTTPAddr
		}
		byFramework[o.FrameworkID] = append(byFramework[o.FrameworkID], w)
	}
	for _, fw := range order {
		l.publishFramework(fw, protocol.MsgOffersEvent, protocol.OffersEvent{Offers: byFramework[fw]})
	}
}

func wireOffer(o offers.Offer) protocol.Offer {
	w := protocol.Offer{
		ID: o.ID, FrameworkID: o.FrameworkID, AgentID: o.AgentID, Hostname: o.Hostname,
		Resources: o.Resources, Attributes: o.Attributes, Kind: protocol.OfferKind(o.Kind),
		Revocable: o.Kind == offers.KindLeftover,
	}
	if !o.Expires.IsZero() {
		w.ExpiresAt = o.Expires.UnixNano()
	}
	return w
}

func (l *leader) sendRescinds(rs []offers.Rescind) {
	l.metrics.rescinds(len(rs))
	for _, r := range rs {
		l.publishFramework(r.FrameworkID, protocol.MsgRescindEvent, protocol.RescindEvent{OfferID: r.OfferID, Reason: r.Reason})
	}
}
