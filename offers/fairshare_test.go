package offers

import (
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// A framework's fair share counts all the work it described, however it
// splits it between must-start and optional, and the tasks it runs.
func TestFairShares_CountOptionalAndRunningWork(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(10000), nil)
	addFw(t, a, "alt", "")
	addFw(t, a, "greedy", "")
	addFw(t, a, "idle", "")
	one := cpus(1000)
	declare(t, a, "alt", Declaration{
		Demand:    []Demand{{Resources: one, Count: 100}},
		MustStart: []Demand{{Resources: one, Count: 2}},
		Optional:  []Demand{{Resources: one, Count: 98}},
	})
	declare(t, a, "greedy", Declaration{Demand: []Demand{{Resources: one, Count: 3}}})

	got := a.FairShares()
	if g, w := got["alt"].Scalar(protocol.ResCPUs), int64(7000); g != w {
		t.Errorf("alt fair share = %d milli-CPU, want %d (all but greedy's 3 tasks)", g, w)
	}
	if g, w := got["greedy"].Scalar(protocol.ResCPUs), int64(3000); g != w {
		t.Errorf("greedy fair share = %d, want %d", g, w)
	}
	if _, ok := got["idle"]; ok {
		t.Errorf("undeclared framework has a fair share: %v", got["idle"])
	}

	// Greedy launches its three tasks: its demand falls to zero, but what it
	// runs still counts, so the shares do not move.
	now := time.Unix(1000, 0)
	for _, o := range a.Allocate(now).Offers {
		if o.FrameworkID != "greedy" {
			continue
		}
		if _, err := a.Accept("greedy", []protocol.OfferID{o.ID}, []protocol.Resources{one, one, one}, now); err != nil {
			t.Fatal(err)
		}
	}
	declare(t, a, "greedy", Declaration{Demand: []Demand{{Resources: one, Count: 0}}})
	if g := a.FairShares()["greedy"].Scalar(protocol.ResCPUs); g != 3000 {
		t.Errorf("greedy fair share while running its 3 tasks = %d, want 3000", g)
	}

	// A demand change invalidates the cache: a bigger greedy demand takes half.
	declare(t, a, "greedy", Declaration{Demand: []Demand{{Resources: one, Count: 20}}})
	got = a.FairShares()
	if g, w := got["greedy"].Scalar(protocol.ResCPUs), int64(5000); g != w {
		t.Errorf("after greedy asks for 20 more: greedy = %d, want %d", g, w)
	}
	if g, w := got["alt"].Scalar(protocol.ResCPUs), int64(5000); g != w {
		t.Errorf("after greedy asks for 20 more: alt = %d, want %d", g, w)
	}
	// A suppressed framework wants nothing more: its share is what it runs.
	must(t, a.Suppress("greedy"))
	if got := a.FairShares(); got["alt"].Scalar(protocol.ResCPUs) != 7000 || got["greedy"].Scalar(protocol.ResCPUs) != 3000 {
		t.Errorf("greedy suppressed with 3 tasks running: shares %v, want alt 7000 and greedy 3000", got)
	}
	must(t, a.Revive("greedy"))
	got = a.FairShares()
	if got["alt"].Scalar(protocol.ResCPUs) != 5000 || got["greedy"].Scalar(protocol.ResCPUs) != 5000 {
		t.Errorf("greedy revived: shares %v, want 5000 each", got)
	}
	// The result is the caller's: changing it changes nothing inside.
	got["alt"] = cpus(1)
	if g := a.FairShares()["alt"].Scalar(protocol.ResCPUs); g != 5000 {
		t.Errorf("cached share changed through a returned map: %d", g)
	}
}

// A task that ends after its shape is no longer declared stops counting
// toward its framework's share.
func TestFairShares_EndedTaskOfUndeclaredShape(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(10000), nil)
	addFw(t, a, "f", "")
	addFw(t, a, "g", "")
	declare(t, a, "f", Declaration{Demand: []Demand{{Resources: cpus(1000), Count: 1}}})
	declare(t, a, "g", Declaration{Demand: []Demand{{Resources: cpus(500), Count: 100}}})
	now := time.Unix(1000, 0)
	var agent protocol.AgentID
	for _, o := range a.Allocate(now).Offers {
		if o.FrameworkID == "f" {
			agent = o.AgentID
			if _, err := a.Accept("f", []protocol.OfferID{o.ID}, []protocol.Resources{cpus(1000)}, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	if agent == "" {
		t.Fatal("f got no offer")
	}
	declare(t, a, "f", Declaration{Demand: []Demand{{Resources: cpus(2000), Count: 1}}})
	if got := a.FairShares()["f"].Scalar(protocol.ResCPUs); got != 3000 {
		t.Fatalf("f running 1 CPU and asking for 2 more: share %d, want 3000", got)
	}
	must(t, a.Recover("f", agent, cpus(1000)))
	declare(t, a, "f", Declaration{Demand: []Demand{{Resources: cpus(1000), Count: 1}}})
	if got := a.FairShares()["f"].Scalar(protocol.ResCPUs); got != 1000 {
		t.Fatalf("f after its task ended, asking for 1 CPU: share %d, want 1000", got)
	}
}
