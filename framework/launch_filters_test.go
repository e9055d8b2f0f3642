package framework_test

import (
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// LaunchRefusing filters what a launch leaves unused; Launch does not.
func TestDriver_LaunchRefusing(t *testing.T) {
	// One master: refuse filters live in the leader's memory, and a leader
	// change (the masters elect under load) would lift them.
	c := testcluster.New(t, testcluster.Options{Masters: 1, Agents: 1})
	rec := newRecorder()
	r := start(t, c, rec, framework.WithFailoverTimeout(time.Minute))
	o := rec.WaitOffer(t, r.d, 0, nil)
	if err := r.d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	// The remainder comes back at once.
	o2 := rec.WaitOffer(t, r.d, 0, func(x protocol.Offer) bool { return x.ID != o.ID })
	n := len(rec.OffersSince(0))
	if err := r.d.LaunchRefusing(ctxT(t), []protocol.OfferID{o2.ID}, time.Hour, task("b", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	if err := testutil.Poll(time.Second, 10*time.Millisecond, func() error {
		if len(rec.OffersSince(n)) > 0 {
			return nil
		}
		return errors.New("no offer")
	}); err == nil {
		t.Fatalf("offered the agent while the launch's filter refuses it: %+v", rec.OffersSince(n))
	}
	if err := r.d.LaunchRefusing(ctxT(t), nil, -time.Second); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("negative refuse: %v, want ErrInvalidArgument", err)
	}
}
