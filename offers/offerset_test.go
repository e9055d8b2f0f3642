package offers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestOffer_remainderFormFollowsTheAgent: an agent's remainder offered
// again as it was carries the same resources, and one that changed (a
// task took some, ports included) carries what is left, never the form
// cached from before.
func TestOffer_remainderFormFollowsTheAgent(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.OfferTimeout = 0
	a := newAlloc(t, cfg)
	total := res("cpus", 4000, "mem", 1024)
	total.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 100, End: 199}}}
	addAgent(t, a, "a1", total, nil)
	addFw(t, a, "f1", "")
	offerOf := func(at time.Time) Offer {
		t.Helper()
		d := a.Allocate(at)
		if len(d.Offers) != 1 {
			t.Fatalf("got %d offers, want 1", len(d.Offers))
		}
		return d.Offers[0]
	}
	first := offerOf(t0)
	if !first.Resources.Equal(total) {
		t.Fatalf("first offer holds %s, want %s", first.Resources, total)
	}
	must(t, a.Decline("f1", ids(first), 0, t0))
	again := offerOf(at(time.Second))
	if again.ID == first.ID || !again.Resources.Equal(total) {
		t.Fatalf("offered again: %s holding %s, want a new offer holding %s", again.ID, again.Resources, total)
	}
	must(t, a.Decline("f1", ids(again), 0, t0))

	used := res("cpus", 1000)
	used.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 150, End: 150}}}
	must(t, a.AddUsage("f1", "a1", used))
	left := res("cpus", 3000, "mem", 1024)
	left.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 100, End: 149}, {Begin: 151, End: 199}}}
	if got := offerOf(at(2 * time.Second)); !got.Resources.Equal(left) {
		t.Fatalf("after a task took some: offer holds %s, want %s", got.Resources, left)
	}
	if !first.Resources.Equal(total) {
		t.Fatalf("an earlier offer's resources changed to %s", first.Resources)
	}
}

// TestOffer_lookupRefusesLookalikeIDs: the book finds offers by the number
// their ID ends with, and an ID with that number but anything else
// different is unknown.
func TestOffer_lookupRefusesLookalikeIDs(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.OfferTimeout = 0
	a := twoAgents(t, cfg)
	d := a.Allocate(t0)
	o := offerOn(t, d.Offers, "f1", "a1")
	seq := string(o.ID[strings.LastIndexByte(string(o.ID), '-')+1:])
	for _, id := range []protocol.OfferID{"x-" + protocol.OfferID(seq), "o-0" + protocol.OfferID(seq),
		"o-" + protocol.OfferID(seq) + "0", "o-", "-", "", "o-18446744073709551616", "o-+1"} {
		if id == o.ID {
			continue
		}
		if err := a.Decline("f1", []protocol.OfferID{id}, 0, t0); !errors.Is(err, ErrUnknownOffer) {
			t.Errorf("decline of %q: got %v, want ErrUnknownOffer", id, err)
		}
	}
	if _, ok := a.Offer(o.ID); !ok {
		t.Fatalf("offer %s lost after declines of lookalikes", o.ID)
	}
	must(t, a.Decline("f1", ids(o), 0, t0))
	if _, ok := a.Offer(o.ID); ok {
		t.Fatalf("offer %s still outstanding after its decline", o.ID)
	}
}
