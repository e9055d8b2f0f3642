package offers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Kind says which pool an offer comes from.
type Kind string

// Offer kinds. Leftover offers carry resources other jobs declined as
// surplus (or fair resources nobody used); the leftover pool fills them.
const (
	KindFair     Kind = "fair"
	KindLeftover Kind = "leftover"
)

// Offer is an outstanding offer as the master sends it. Its Resources and
// Attributes may be shared with other offers of the same agent: read
// them, never change them.
type Offer struct {
	ID          protocol.OfferID
	FrameworkID protocol.FrameworkID
	AgentID     protocol.AgentID
	Hostname    string
	Resources   protocol.Resources
	Attributes  protocol.Attributes
	Kind        Kind
	// Expires is when the offer is rescinded; zero means never.
	Expires time.Time
	// Made is the time of the round that made the offer.
	Made time.Time
	// Tasks is how many declared task units the offer was sized for (zero
	// for a whole-remainder offer).
	Tasks int64
}

// Rescind tells a framework an offer is gone.
type Rescind struct {
	OfferID     protocol.OfferID
	FrameworkID protocol.FrameworkID
	AgentID     protocol.AgentID
	Reason      string
}

// offer is the allocator's record of an outstanding offer. Its resources
// are out of the agent's free pool and count toward the framework's share
// until it is accepted, declined, expired or rescinded.
type offer struct {
	id      protocol.OfferID
	seq     uint64 // the number id ends with
	dropped bool
	pos     [2]int // in its framework's and its agent's offerSet
	fw      *framework
	ag      *agent
	res     vec
	ports   protocol.Ranges
	units   map[string]int64
	n       int64
	kind    Kind
	expires time.Time
	made    time.Time
}

func (a *Allocator) makeOffer(ag *agent, b *building, now time.Time) Offer {
	f := b.fw
	a.offerSeq++
	o := &offer{
		id:      a.nextOfferID(),
		seq:     a.offerSeq,
		fw:      f,
		ag:      ag,
		res:     b.res,
		ports:   b.ports,
		units:   b.units,
		n:       b.n,
		kind:    b.kind,
		expires: a.expiryOf(now),
		made:    now,
	}
	a.offers[o.seq] = o
	f.offers.add(o)
	ag.offers.add(o)
	if !o.expires.IsZero() {
		a.expiryQ = append(a.expiryQ, o)
	}
	return a.public(o)
}

// nextOfferID is "<prefix>-<sequence number>", built with one allocation.
func (a *Allocator) nextOfferID() protocol.OfferID {
	a.idBuf = append(append(a.idBuf[:0], a.cfg.OfferIDPrefix...), '-')
	a.idBuf = strconv.AppendUint(a.idBuf, a.offerSeq, 10)
	return protocol.OfferID(a.idBuf)
}

func (a *Allocator) public(o *offer) Offer {
	return Offer{
		ID:          o.id,
		FrameworkID: o.fw.id,
		AgentID:     o.ag.id,
		Hostname:    o.ag.info.Hostname,
		Resources:   a.offerResources(o),
		Attributes:  o.ag.info.Attributes,
		Kind:        o.kind,
		Expires:     o.expires,
		Made:        o.made,
		Tasks:       o.n,
	}
}

// offeredForm caches the protocol form of an agent's offered resources.
// An agent's remainder is often offered again just as it was (declined,
// or left unused by its last taker), and building its maps anew for every
// offer was the largest cost of a round: a repeat shares them instead.
type offeredForm struct {
	res   vec
	ports protocol.Ranges
	out   protocol.Resources
	ok    bool
}

// offerResources returns o's resources in protocol form, shared with the
// agent's previous offer when they are the same.
func (a *Allocator) offerResources(o *offer) protocol.Resources {
	c := &o.ag.offered
	if c.ok && sameVec(c.res, o.res) && slices.Equal(c.ports, o.ports) {
		return c.out
	}
	c.res = append(c.res[:0], o.res...)
	c.ports = o.ports // Ranges are never changed in place
	c.out = a.protocolResources(o.res, o.ports)
	c.ok = true
	return c.out
}

// lookup finds an outstanding offer by ID. The book is keyed by the
// number the ID ends with: hashing a number rather than a string was a
// tenth of a large round's time.
func (a *Allocator) lookup(id protocol.OfferID) (*offer, bool) {
	s := string(id)
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return nil, false
	}
	seq, err := strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return nil, false
	}
	o, ok := a.offers[seq]
	if !ok || o.id != id {
		return nil, false
	}
	return o, true
}

// Offer returns an outstanding offer by ID.
func (a *Allocator) Offer(id protocol.OfferID) (Offer, bool) {
	o, ok := a.lookup(id)
	if !ok {
		return Offer{}, false
	}
	return a.public(o), true
}

// Outstanding returns every outstanding offer ordered by ID.
func (a *Allocator) Outstanding() []Offer {
	out := make([]Offer, 0, len(a.offers))
	for _, o := range sortedOffers(a.offers) {
		out = append(out, a.public(o))
	}
	return out
}

// dropOffer forgets an offer and returns its resources to the agent.
func (a *Allocator) dropOffer(o *offer) {
	delete(a.offers, o.seq)
	o.dropped = true
	o.fw.offers.remove(o)
	o.ag.offers.remove(o)
	a.addFree(o.ag, o.res, 1)
	if len(o.ports) > 0 {
		o.ag.freePorts = o.ag.freePorts.Union(o.ports)
	}
	o.fw.offered = o.fw.offered.sub(o.res)
	a.addAlloc(o.fw, o.res, -1)
	for key, n := range o.units {
		for _, s := range o.fw.shapesOf(o.kind) {
			if s.key == key {
				s.offered = max(0, s.offered-n)
			}
		}
	}
	a.refresh(o.fw)
}

func (a *Allocator) rescind(o *offer, reason string) Rescind {
	a.dropOffer(o)
	return Rescind{OfferID: o.id, FrameworkID: o.fw.id, AgentID: o.ag.id, Reason: reason}
}

// Expire rescinds every offer whose expiry is at or before now.
func (a *Allocator) Expire(now time.Time) []Rescind {
	var out []Rescind
	for len(a.expiryQ) > 0 {
		o := a.expiryQ[0]
		if !o.dropped {
			if o.expires.After(now) {
				break
			}
			out = append(out, a.rescind(o, "offer expired"))
		}
		a.expiryQ[0] = nil
		a.expiryQ = a.expiryQ[1:]
	}
	return out
}

// Rescind withdraws outstanding offers (for example when the master learns
// their agent is draining); unknown IDs are ignored.
func (a *Allocator) Rescind(ids []protocol.OfferID, reason string) []Rescind {
	var out []Rescind
	for _, id := range ids {
		if o, ok := a.lookup(id); ok {
			out = append(out, a.rescind(o, reason))
		}
	}
	return out
}

// ownedOffers resolves offer IDs for a framework: each must be outstanding,
// belong to it and appear once, and with oneAgent all must be on one agent
// (an accept's; a decline's may be on many). They are appended to buf[:0].
func (a *Allocator) ownedOffers(f *framework, ids []protocol.OfferID, buf []*offer, oneAgent bool) ([]*offer, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: no offers named", ErrInvalid)
	}
	if dup, ok := firstRepeated(ids); ok {
		return nil, fmt.Errorf("%w: offer %s named twice", ErrInvalid, dup)
	}
	out := buf[:0]
	for _, id := range ids {
		o, ok := a.lookup(id)
		if !ok || o.fw != f {
			// Another framework's offer is reported as unknown: its
			// existence is none of this framework's business.
			return nil, fmt.Errorf("%w: %s", ErrUnknownOffer, id)
		}
		if oneAgent && len(out) > 0 && o.ag != out[0].ag {
			return nil, fmt.Errorf("%w: offers %s and %s are on different agents", ErrOfferMismatch, out[0].id, id)
		}
		out = append(out, o)
	}
	return out, nil
}

// firstRepeated returns an ID named twice, if any: by comparison for a
// few IDs, with a set for many (a decline may name thousands).
func firstRepeated(ids []protocol.OfferID) (protocol.OfferID, bool) {
	if len(ids) <= 16 {
		for i, id := range ids {
			if slices.Contains(ids[:i], id) {
				return id, true
			}
		}
		return "", false
	}
	seen := make(map[protocol.OfferID]struct{}, len(ids))
	for _, id := range ids {
		if _, ok := seen[id]; ok {
			return id, true
		}
		seen[id] = struct{}{}
	}
	return "", false
}

// DefaultFilter asks Decline to install Config.DefaultRefuse.
const DefaultFilter time.Duration = -1

// Decline returns offers unused. A positive refuse installs a filter so the
// framework is not offered that agent again for that long; DefaultFilter
// uses the configured default; zero installs none.
func (a *Allocator) Decline(fwID protocol.FrameworkID, ids []protocol.OfferID, refuse time.Duration, now time.Time) error {
	if refuse < 0 {
		refuse = a.cfg.DefaultRefuse
	}
	return a.decline(fwID, ids, refuse, now)
}

// DeclineLeftover returns offers as leftover: the framework gives them up
// for others to use (Carbyne altruism), so no refuse filter is installed
// unless refuse asks for one (DefaultFilter and zero install none). The
// resources rejoin the agent's free pool, where the next round's fair
// phase and then its leftover phase hand them out; nothing keeps them
// from coming back to the framework itself if nobody else can use them.
func (a *Allocator) DeclineLeftover(fwID protocol.FrameworkID, ids []protocol.OfferID, refuse time.Duration, now time.Time) error {
	return a.decline(fwID, ids, max(refuse, 0), now)
}

func (a *Allocator) decline(fwID protocol.FrameworkID, ids []protocol.OfferID, refuse time.Duration, now time.Time) error {
	f, err := a.framework(fwID)
	if err != nil {
		return err
	}
	held, err := a.ownedOffers(f, ids, a.heldBuf, false)
	if err != nil {
		return err
	}
	defer func() { a.heldBuf = held[:0] }()
	if a.cfg.MaxRefuse > 0 && refuse > a.cfg.MaxRefuse {
		refuse = a.cfg.MaxRefuse
	}
	for _, o := range held {
		a.dropOffer(o)
	}
	if refuse > 0 {
		// A decline may name offers on many agents: each is refused, for
		// what its offers held.
		until := now.Add(refuse)
		for _, o := range held {
			if fl, ok := o.ag.filters[f.idx]; ok && fl.until.Equal(until) {
				fl.refused = fl.refused.add(o.res)
				o.ag.filters[f.idx] = fl
				continue
			}
			a.addFilter(o.ag, f, until, o.res.clone())
		}
	}
	return nil
}

func sortedOffers(m map[uint64]*offer) []*offer {
	out := make([]*offer, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	slices.SortFunc(out, func(x, y *offer) int { return strings.Compare(string(x.id), string(y.id)) })
	return out
}
