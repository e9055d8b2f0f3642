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

// A leader that had stepped down refuses an accept before proposing it
// (ErrNotLeader): nothing launched, not ambiguous. One that lost
// leadership after proposing it answers ErrUnavailable: ambiguous.
func TestNotLeaderIsDefinite(t *testing.T) {
	notLeader := refusedAccept(protocol.Errorf(protocol.ErrNotLeader, "not applied"))
	if ambiguous(notLeader) || !launchedNothing(notLeader) || !retryable(notLeader) {
		t.Fatalf("not the leader: ambiguous %v, launched nothing %v, retryable %v; want false, true, true",
			ambiguous(notLeader), launchedNothing(notLeader), retryable(notLeader))
	}
	lost := protocol.Errorf(protocol.ErrUnavailable, "the outcome is unknown")
	if !ambiguous(lost) || launchedNothing(lost) {
		t.Fatalf("leadership lost: ambiguous %v, launched nothing %v; want true, false", ambiguous(lost), launchedNothing(lost))
	}
	if !launchedNothing(refusedAccept(nats.ErrNoResponders)) || !launchedNothing(protocol.Errorf(protocol.ErrOfferRescinded, "x")) {
		t.Fatal("no responders or a rescinded offer: want launched nothing")
	}
}
