package offers

import (
	"errors"
	"fmt"
	"time"

	"github.com/allot-project/allot/protocol"
)

// forged sends operations with unknown or foreign IDs; each must fail with
// its sentinel and change nothing.
func (z *fuzzRun) forged() {
	before := snap(z.a)
	var err, want error
	kind := z.b() % 9
	o, haveOffer := z.outstanding()
	fw := z.fwID()
	_, fwLive := z.a.frameworks[fw]
	switch kind {
	case 0:
		_, err = z.a.Accept("f-forged", []protocol.OfferID{"o-1"}, []protocol.Resources{res("cpus", 1)}, z.now)
		want = protocol.ErrUnknownFramework
	case 1:
		_, err = z.a.Accept(fw, []protocol.OfferID{"o-forged"}, []protocol.Resources{res("cpus", 1)}, z.now)
		want = protocol.ErrUnknownOffer
	case 2:
		if !haveOffer || !fwLive || o.FrameworkID == fw {
			return
		}
		_, err = z.a.Accept(fw, ids(o), []protocol.Resources{res("cpus", 1)}, z.now)
		want = protocol.ErrUnknownOffer
	case 3:
		err = z.a.Decline(fw, []protocol.OfferID{"o-forged"}, time.Hour, z.now)
		want = protocol.ErrUnknownOffer
	case 4:
		err = z.a.Recover(fw, "a-forged", res("cpus", 1))
		want = protocol.ErrUnknownAgent
	case 5:
		_, err = z.a.RemoveAgent("a-forged")
		want = protocol.ErrUnknownAgent
	case 6:
		err = z.a.SetDemand("f-forged", []Demand{{Resources: res("cpus", 1), Count: 1}})
		want = protocol.ErrUnknownFramework
	case 7:
		err = z.a.Decline(fw, nil, time.Hour, z.now)
		want = protocol.ErrInvalidArgument
	default:
		if !haveOffer || !fwLive || o.FrameworkID == fw {
			return
		}
		err = z.a.Decline(fw, ids(o), time.Hour, z.now)
		want = protocol.ErrUnknownOffer
	}
	if !fwLive && kind != 0 && kind != 5 && kind != 6 {
		want = protocol.ErrUnknownFramework
	}
	if !errors.Is(err, want) {
		z.fail("forged op %d: got %v, want %v", kind, err, want)
	}
	sameStateFuzz(z, fmt.Sprintf("forged op %d", kind), before)
	z.logf("forged %d = %v", kind, err)
}

func sameStateFuzz(z *fuzzRun, what string, before snapshot) {
	if after := snap(z.a); fmt.Sprint(before) != fmt.Sprint(after) {
		z.fail("%s changed state:\n got  %+v\n want %+v", what, after, before)
	}
}
