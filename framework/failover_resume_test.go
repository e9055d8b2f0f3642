package framework_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// A driver back at a new leader restores its demand and opens its offers
// with the subscribe itself: after the failover no Demand or Revive call
// goes out, and the new leader's offers follow the demand declared before
// the failover.
func TestDriver_ResubscribeCarriesItsState(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 2})
	rec := newRecorder()
	d := prepare(t, c, rec, framework.WithFailoverTimeout(time.Minute))
	if err := d.Demand(ctxT(t), protocol.TaskShape{Resources: unit(), Count: 1}); err != nil {
		t.Fatal(err)
	}
	run(t, d)
	o := rec.WaitOffer(t, d, 0, nil)

	var mu sync.Mutex
	var verbs []string
	spy := c.Connect("spy")
	sub, err := spy.Subscribe(c.Subjects().APIKind(protocol.KindFramework), func(m *nats.Msg) {
		if api, ok := c.Subjects().ParseAPI(m.Subject); ok {
			mu.Lock()
			verbs = append(verbs, api.Verb)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}

	before := rec.Reregistrations()
	c.KillLeader()
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if rec.Reregistrations() == before {
			return fmt.Errorf("not subscribed to a new leader yet")
		}
		return nil
	})
	o2 := rec.WaitOffer(t, d, 0, func(x protocol.Offer) bool { return x.ID != o.ID })
	if cpus := o2.Resources.Scalar(protocol.ResCPUs); cpus != unit().Scalar(protocol.ResCPUs) {
		t.Errorf("offer after the failover holds %d milli-CPUs, want the one task the demand declares (%d)",
			cpus, unit().Scalar(protocol.ResCPUs))
	}
	mu.Lock()
	seen := slices.Clone(verbs)
	mu.Unlock()
	if !slices.Contains(seen, string(protocol.VerbSubscribe)) {
		t.Fatalf("calls after the kill %v: no subscribe seen", seen)
	}
	for _, v := range []protocol.FrameworkVerb{protocol.VerbDemand, protocol.VerbRevive} {
		if slices.Contains(seen, string(v)) {
			t.Errorf("calls after the kill %v: a %s call, which the subscribe should have carried", seen, v)
		}
	}
}
