package offers

import (
	"testing"
)

// A framework that refuses revocable resources is never offered leftover,
// whatever it declares; the others get that leftover, and it gets it again
// once it accepts revocable resources.
func TestAllocator_NoRevocable(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	a := figure2(t, cfg)
	must(t, a.SetNoRevocable("J1", true))
	d := a.Allocate(t0)
	for _, o := range ofKind(d.Offers, KindLeftover) {
		if o.FrameworkID == "J1" {
			t.Fatalf("J1 refuses revocable resources but was offered leftover %+v", o)
		}
	}
	if len(ofKind(d.Offers, KindLeftover)) == 0 {
		t.Fatal("no leftover offer at all: J2 should have taken the pool")
	}

	b := figure2(t, cfg)
	must(t, b.SetNoRevocable("J1", true))
	must(t, b.SetNoRevocable("J1", false))
	got := false
	for _, o := range ofKind(b.Allocate(t0).Offers, KindLeftover) {
		got = got || o.FrameworkID == "J1"
	}
	if !got {
		t.Fatal("J1 accepts revocable resources again but got no leftover offer")
	}
	wantErr(t, "unknown framework", a.SetNoRevocable("nope", true), ErrUnknownFramework)
}
