package framework

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// An accept no leader received is unavailable (schedulers keep their
// tasks pending); a refusal keeps the leader's sentinel only.
func TestRefusedAccept(t *testing.T) {
	err := refusedAccept(nats.ErrNoResponders)
	if !errors.Is(err, protocol.ErrUnavailable) || !errors.Is(err, nats.ErrNoResponders) || ambiguous(err) {
		t.Fatalf("no responders: %v, want unavailable and no responders, not ambiguous", err)
	}
	err = refusedAccept(protocol.Errorf(protocol.ErrUnknownOffer, "gone"))
	if !errors.Is(err, protocol.ErrUnknownOffer) || errors.Is(err, protocol.ErrUnavailable) {
		t.Fatalf("unknown offer: %v, want only ErrUnknownOffer", err)
	}
}
