package framework_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// A registered coflow is the leader's memory only: the driver registers it
// again with a new leader (grown as it was), until it is withdrawn. A flow
// naming an agent the cluster does not know is refused.
func TestDriver_CoflowSurvivesFailover(t *testing.T) {
	c, rec, d, o0, o1 := offeredBoth(t)
	a0, a1 := o0.AgentID, o1.AgentID
	if err := d.RegisterCoflow(ctxT(t), "shuffle-1", []protocol.FlowSpec{{Src: a0, Dst: a1, Transfers: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := d.RegisterCoflow(ctxT(t), "shuffle-1", []protocol.FlowSpec{{Src: a1, Dst: a1, Transfers: 1}}); err != nil {
		t.Fatal(err)
	}
	err := d.RegisterCoflow(ctxT(t), "shuffle-2", []protocol.FlowSpec{{Src: a0, Dst: "ag-nowhere", Transfers: 1}})
	if !errors.Is(err, protocol.ErrUnknownAgent) {
		t.Fatalf("a flow to an unknown agent: got %v, want ErrUnknownAgent", err)
	}
	waitCoflows := func(want string) {
		t.Helper()
		testutil.WaitFor(t, 20*time.Second, 10*time.Millisecond, func() error {
			got, ok := c.WaitForLeader().Coflows()
			if !ok {
				return fmt.Errorf("no leader serving")
			}
			s := ""
			for _, cf := range got.Coflows {
				s += fmt.Sprintf("%s:%d", cf.CoflowID, cf.Flows)
			}
			if s != want {
				return fmt.Errorf("leader's coflows %q, want %q", s, want)
			}
			return nil
		})
	}
	waitCoflows("shuffle-1:2")

	before := rec.Reregistrations()
	c.KillLeader()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if rec.Reregistrations() == before {
			return fmt.Errorf("not subscribed to a new leader yet")
		}
		return nil
	})
	waitCoflows("shuffle-1:2")

	if err := d.WithdrawCoflow(ctxT(t), "shuffle-1"); err != nil {
		t.Fatal(err)
	}
	waitCoflows("")
}
