package offers

import (
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func TestAllocator_Decline_filter(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name      string
		refuse    time.Duration
		maxRefuse time.Duration
		until     time.Duration // 0: no filter
	}{
		{"default filter", DefaultFilter, 365 * day, 5 * time.Second},
		{"explicit", 10 * time.Second, 365 * day, 10 * time.Second},
		{"zero installs none", 0, 365 * day, 0},
		{"capped by MaxRefuse", 1000 * day, 365 * day, 365 * day},
		{"small MaxRefuse", time.Minute, 2 * time.Second, 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(PolicyDynamic)
			cfg.OfferTimeout, cfg.MaxRefuse = 0, tc.maxRefuse
			a := twoAgents(t, cfg)
			d := a.Allocate(t0)
			must(t, a.Decline("f1", ids(offerOn(t, d.Offers, "f1", "a1")), tc.refuse, t0))
			back := []offerKey{{"f1", "a1", "cpus:1000;mem:1024", 1}}
			if tc.until == 0 {
				if got := keys(a.Allocate(t0).Offers); !reflect.DeepEqual(got, back) {
					t.Fatalf("right after decline: got %v, want %v", got, back)
				}
				return
			}
			if got := a.Allocate(at(tc.until - time.Nanosecond)).Offers; len(got) != 0 {
				t.Fatalf("just before the filter expires: got %v, want none", keys(got))
			}
			if got := keys(a.Allocate(at(tc.until)).Offers); !reflect.DeepEqual(got, back) {
				t.Fatalf("at filter expiry: got %v, want %v", got, back)
			}
		})
	}
}

func TestAllocator_Decline_filterIsPerFrameworkAndAgent(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.OfferTimeout = 0
	a := twoAgents(t, cfg)
	d := a.Allocate(t0)
	must(t, a.Decline("f1", ids(offerOn(t, d.Offers, "f1", "a1")), time.Hour, t0))
	a.Rescind(ids(offerOn(t, d.Offers, "f1", "a2")), "test")
	addFw(t, a, "f2", "")
	demand(t, a, "f2", unitDemand)
	got := sortedKeys(a.Allocate(at(time.Second)).Offers)
	want := []offerKey{{"f1", "a2", "cpus:1000;mem:1024", 1}, {"f2", "a1", "cpus:1000;mem:1024", 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("offers: got %v, want %v", got, want)
	}
}

// TestAllocator_Decline_manyAgents: one decline of offers on two agents
// refuses both agents to the framework, not only the first one named.
func TestAllocator_Decline_manyAgents(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.OfferTimeout = 0
	a := twoAgents(t, cfg)
	d := a.Allocate(t0)
	both := append(ids(offerOn(t, d.Offers, "f1", "a1")), ids(offerOn(t, d.Offers, "f1", "a2"))...)
	must(t, a.Decline("f1", both, time.Minute, t0))
	if got := a.Allocate(at(time.Minute - time.Nanosecond)).Offers; len(got) != 0 {
		t.Fatalf("within the refusal: got %v, want no offer on either agent", keys(got))
	}
	want := []offerKey{{"f1", "a1", "cpus:1000;mem:1024", 1}, {"f1", "a2", "cpus:1000;mem:1024", 1}}
	if got := sortedKeys(a.Allocate(at(time.Minute)).Offers); !reflect.DeepEqual(got, want) {
		t.Fatalf("at expiry: got %v, want %v", got, want)
	}
}

func TestAllocator_Revive_clearsFilters(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.OfferTimeout = 0
	a := twoAgents(t, cfg)
	d := a.Allocate(t0)
	must(t, a.Decline("f1", ids(d.Offers...)[:1], time.Hour, t0))
	must(t, a.Decline("f1", ids(d.Offers...)[1:], time.Hour, t0))
	if got := a.Allocate(at(time.Second)).Offers; len(got) != 0 {
		t.Fatalf("filtered: got %v, want none", keys(got))
	}
	must(t, a.Revive("f1"))
	d = a.Allocate(at(2 * time.Second))
	if got := len(d.Offers); got != 2 {
		t.Fatalf("after revive: got %d offers, want 2", got)
	}
	// The revived filters' stale expiry entries (t0+1h) must not lift a
	// newer filter on the same pair.
	must(t, a.Decline("f1", ids(offerOn(t, d.Offers, "f1", "a1")), 2*time.Hour, at(2*time.Second)))
	if got := a.Allocate(at(time.Hour + time.Second)).Offers; len(got) != 0 {
		t.Fatalf("newer filter after the stale entry expired: got %v, want none", keys(got))
	}
	if got := len(a.Allocate(at(2*time.Hour + 2*time.Second)).Offers); got != 1 {
		t.Fatalf("at the newer filter's expiry: got %d offers, want 1", got)
	}
}

func TestAllocator_Decline_errors(t *testing.T) {
	tests := []struct {
		name   string
		fw     protocol.FrameworkID
		offers func(mine, theirs Offer) []protocol.OfferID
		want   error
	}{
		{"someone else's offer", "f1", func(_, theirs Offer) []protocol.OfferID { return ids(theirs) }, protocol.ErrUnknownOffer},
		{"unknown offer", "f1", func(Offer, Offer) []protocol.OfferID { return []protocol.OfferID{"o-999"} }, protocol.ErrUnknownOffer},
		{"mine then unknown", "f1", func(mine, _ Offer) []protocol.OfferID { return []protocol.OfferID{mine.ID, "o-999"} }, protocol.ErrUnknownOffer},
		{"same offer twice in one call", "f1", func(mine, _ Offer) []protocol.OfferID { return ids(mine, mine) }, protocol.ErrInvalidArgument},
		{"empty list", "f1", func(Offer, Offer) []protocol.OfferID { return []protocol.OfferID{} }, protocol.ErrInvalidArgument},
		{"nil list", "f1", func(Offer, Offer) []protocol.OfferID { return nil }, protocol.ErrInvalidArgument},
		{"unknown framework", "f7", func(mine, _ Offer) []protocol.OfferID { return ids(mine) }, protocol.ErrUnknownFramework},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := setup(t, testConfig(PolicyDynamic),
				[]AgentInfo{agentInfo("a1", cpuMem(1000, 1024), nil), agentInfo("a2", cpuMem(1000, 1024), nil)},
				[]fwSpec{{ID: "f1", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 1}}}, {ID: "f2"}})
			d := a.Allocate(t0)
			mine, theirs := offerOn(t, d.Offers, "f1", "a1"), offerOn(t, d.Offers, "f2", "a2")
			before := snap(a)
			err := a.Decline(tc.fw, tc.offers(mine, theirs), time.Hour, t0)
			wantErr(t, "Decline", err, tc.want)
			sameState(t, "failed Decline", before, a)
			for _, ag := range a.agentList {
				if len(ag.filters) != 0 {
					t.Fatalf("failed Decline installed a filter on %s", ag.id)
				}
			}
		})
	}
	t.Run("same offer declined twice", func(t *testing.T) {
		a := twoAgents(t, testConfig(PolicyDynamic))
		o := a.Allocate(t0).Offers[0]
		must(t, a.Decline("f1", ids(o), 0, t0))
		before := snap(a)
		wantErr(t, "second Decline", a.Decline("f1", ids(o), 0, t0), protocol.ErrUnknownOffer)
		sameState(t, "second Decline", before, a)
	})
}
