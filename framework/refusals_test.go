package framework_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// A decline filter outlives a leader change: the new leader knows no
// filter, but the driver sets its filters still in force again when it
// subscribes there, so the declined agent comes back only once the filter
// expires, while the other agent is offered at once.
func TestDriver_RefusalsSurviveFailover(t *testing.T) {
	c, rec, d, o0, o1 := offeredBoth(t)
	a0, a1 := o0.AgentID, o1.AgentID
	const refuse = 3 * time.Second
	declined := time.Now()
	if err := d.Decline(ctxT(t), []protocol.OfferID{o0.ID}, refuse); err != nil {
		t.Fatal(err)
	}
	before, mark := rec.Reregistrations(), rec.OfferCount()
	c.KillLeader()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := rec.Reregistrations(); n == before {
			return fmt.Errorf("not subscribed to a new leader yet")
		}
		return nil
	})
	rec.WaitOffer(t, d, mark, onAgent(a1))
	back := rec.WaitOffer(t, d, mark, onAgent(a0))
	if elapsed := time.Since(declined); elapsed < refuse {
		t.Fatalf("agent %s offered again %s after its decline, across a leader change, refuse filter %s (offer %s)",
			a0, elapsed, refuse, back.ID)
	}
}
