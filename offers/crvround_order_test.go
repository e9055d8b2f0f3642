package offers

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// The steering order, built by bucketing the scarce agents by their score,
// is the order sorting them by score and position gives.
func TestCRVPrepare_bucketsAsSort(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		a := newAlloc(t, testConfig(PolicyDynamic))
		next := 0
		addOne := func() {
			attrs := protocol.Attributes{"rack": protocol.Text(fmt.Sprint("r", r.IntN(5))), "zone": protocol.Text(fmt.Sprint("z", r.IntN(3)))}
			addAgent(t, a, fmt.Sprint("a", next), cpuMem(int64(1+r.IntN(4))*1000, 4096), attrs)
			next++
		}
		for range 40 {
			addOne()
		}
		// After every change of the classes (a new constraint, agents
		// joining and leaving), the order is the sorted one: the groups of
		// agents with the same classes follow them.
		for i := range 6 {
			id := fmt.Sprint("f", i)
			addFw(t, a, id, "r")
			attr := []string{"rack", "zone"}[r.IntN(2)]
			c := protocol.Constraint{Attribute: attr, Op: protocol.OpEq, Value: fmt.Sprint(attr[:1], r.IntN(3))}
			demand(t, a, id, Demand{Resources: cpuMem(1000, 512), Count: int64(1 + r.IntN(40)), Constraints: []protocol.Constraint{c}})
			checkCRVOrder(t, a, r.IntN(len(a.agentList)), seed)
			switch r.IntN(3) {
			case 0:
				addOne()
			case 1:
				if _, err := a.RemoveAgent(a.agentList[r.IntN(len(a.agentList))].id); err != nil {
					t.Fatal(err)
				}
			}
			checkCRVOrder(t, a, r.IntN(len(a.agentList)), seed)
		}
	}
}

// checkCRVOrder compares crvPrepare's order with the reference: plain
// agents in rotating order, then the scarce ones sorted by score, then
// position.
func checkCRVOrder(t *testing.T, a *Allocator, start int, seed uint64) {
	t.Helper()
	a.crvPrepare(start)
	turn := &a.crv.turn
	if !turn.on {
		return
	}
	n := len(a.agentList)
	var plain []*agent
	type scarceAgent struct {
		ag    *agent
		score float64
		pos   int
	}
	var ranked []scarceAgent
	for i := range n {
		ag := a.agentList[(start+i)%n]
		score, scarce := 0.0, false
		for _, c := range ag.classes {
			if c.contended {
				score, scarce = max(score, c.ratio), true
			}
		}
		if scarce {
			ranked = append(ranked, scarceAgent{ag: ag, score: score, pos: i})
		} else {
			plain = append(plain, ag)
		}
	}
	slices.SortFunc(ranked, func(x, y scarceAgent) int { return cmp.Or(cmp.Compare(x.score, y.score), cmp.Compare(x.pos, y.pos)) })
	want := plain
	for _, x := range ranked {
		want = append(want, x.ag)
	}
	if !slices.Equal(turn.order, want) || turn.plain != len(plain) {
		t.Fatalf("seed %d: order differs from the sorted one", seed)
	}
}
