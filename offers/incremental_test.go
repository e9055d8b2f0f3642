package offers

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// nodeState is what eval caches for one node.
type nodeState struct {
	path string
	v    []float64
	s    float64
	nb   bool
}

// cachedStates evaluates the tree through the caches, as the walk does.
func cachedStates(a *Allocator) []nodeState {
	a.syncAvail()
	a.eval(a.tree.root)
	return collectStates(a.tree.root, nil)
}

// freshStates throws every cache away and evaluates from scratch.
func freshStates(a *Allocator) []nodeState {
	a.ver++
	a.syncAvail()
	a.eval(a.tree.root)
	return collectStates(a.tree.root, nil)
}

func collectStates(n *node, out []nodeState) []nodeState {
	out = append(out, nodeState{path: n.path, v: slices.Clone(n.v), s: n.s, nb: n.nb})
	for _, c := range n.children {
		out = collectStates(c, out)
	}
	return out
}

// checkOrder verifies that every sorted child order that is current lists
// the children by (key, seq).
func checkOrder(t *testing.T, a *Allocator, n *node) {
	t.Helper()
	if n.orderVer == a.ver && len(n.order) == len(n.children) && len(n.stale) == 0 {
		for i := 1; i < len(n.order); i++ {
			x, y := n.children[n.order[i-1]], n.children[n.order[i]]
			if orderBefore(y.key, y.seq, x.key, x.seq) {
				t.Fatalf("order of %q: %s (%v) before %s (%v)", n.path, x.path, x.key, y.path, y.key)
			}
		}
	}
	for _, c := range n.children {
		checkOrder(t, a, c)
	}
}

// TestAllocator_IncrementalEqualsFull is an H-DRF property (docs/hdrf.md): after every
// event of a random sequence, the lazily maintained shares equal a full
// recomputation, for every rescaling rule.
func TestAllocator_IncrementalEqualsFull(t *testing.T) {
	t.Parallel()
	for _, policy := range []Policy{PolicyDynamic, PolicyPaper, PolicyNaive} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", policy, seed), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(seed, 7))
				cfg := DefaultConfig()
				cfg.Policy = policy
				a := mustNew(t, cfg)
				res := []string{"cpus", "mem", "gpus"}
				for i := 0; i < 4; i++ {
					total := map[string]int64{}
					for _, r := range res {
						total[r] = 20 + rng.Int64N(40)
					}
					mustOK(t, a.AddAgent(AgentInfo{ID: protocol.AgentID(fmt.Sprintf("a%d", i)), Total: protocol.Scalars(total)}))
				}
				var fws []protocol.FrameworkID
				for i := 0; i < 12; i++ {
					role := fmt.Sprintf("r%d/s%d", rng.IntN(3), rng.IntN(2))
					if i%4 == 0 {
						role = fmt.Sprintf("r%d", rng.IntN(3))
					}
					id := protocol.FrameworkID(fmt.Sprintf("f%d", i))
					mustOK(t, a.AddFramework(FrameworkInfo{ID: id, Role: role, Weight: float64(1 + rng.IntN(3))}))
					demand := map[string]int64{}
					for _, r := range res {
						if rng.IntN(2) == 0 {
							demand[r] = rng.Int64N(4)
						}
					}
					demand[res[rng.IntN(len(res))]] = 1 + rng.Int64N(3)
					mustOK(t, a.SetDemand(id, []Demand{{Resources: protocol.Scalars(demand), Count: 1 + rng.Int64N(30)}}))
					fws = append(fws, id)
				}
				now := time.Unix(0, 0)
				type launched struct {
					fw  protocol.FrameworkID
					ag  protocol.AgentID
					res protocol.Resources
				}
				var running []launched
				for step := 0; step < 150; step++ {
					now = now.Add(time.Second)
					switch op := rng.IntN(10); {
					case op < 5:
						for _, o := range a.Allocate(now).Offers {
							if rng.IntN(4) == 0 {
								mustOK(t, a.Decline(o.FrameworkID, []protocol.OfferID{o.ID}, time.Duration(rng.IntN(3))*time.Second, now))
								continue
							}
							per := protocol.Scalars(o.Resources.Scalars)
							if o.Tasks > 0 {
								per = scaleDown(o.Resources, o.Tasks)
							}
							_, err := a.Accept(o.FrameworkID, []protocol.OfferID{o.ID}, []protocol.Resources{per}, now)
							mustOK(t, err)
							running = append(running, launched{o.FrameworkID, o.AgentID, per})
						}
					case op < 8 && len(running) > 0:
						i := rng.IntN(len(running))
						r := running[i]
						running = slices.Delete(running, i, i+1)
						mustOK(t, a.Recover(r.fw, r.ag, r.res))
					case op < 9:
						mustOK(t, a.Suppress(fws[rng.IntN(len(fws))]))
					default:
						mustOK(t, a.Revive(fws[rng.IntN(len(fws))]))
					}
					got := cachedStates(a)
					checkOrder(t, a, a.tree.root)
					want := freshStates(a)
					for i := range want {
						if got[i].s != want[i].s || got[i].nb != want[i].nb || !slices.Equal(got[i].v, want[i].v) {
							t.Fatalf("step %d node %q: incremental (s=%v nb=%v v=%v), full (s=%v nb=%v v=%v)",
								step, want[i].path, got[i].s, got[i].nb, got[i].v, want[i].s, want[i].nb, want[i].v)
						}
					}
				}
			})
		}
	}
}

// scaleDown divides an offer made of n equal task units into one unit.
func scaleDown(r protocol.Resources, n int64) protocol.Resources {
	out := map[string]int64{}
	for k, v := range r.Scalars {
		out[k] = v / n
	}
	return protocol.Scalars(out)
}

// TestAllocator_NewResourceNameInvalidatesCaches: a demand naming a
// resource no agent or demand named before lengthens every vector; the
// cached evaluations (and whole-task walks) of the old length must not be
// combined with new ones. The sequence comes from FuzzAllocator.
func TestAllocator_NewResourceNameInvalidatesCaches(t *testing.T) {
	for _, p := range Policies() {
		t.Run(string(p), func(t *testing.T) {
			a := newAlloc(t, testConfig(p))
			addAgent(t, a, "a0", withPorts(cpuMem(250, 256), 31012, 31012), nil)
			addFw(t, a, "f0", "eng/prod")
			for i := 1; i <= 8; i++ {
				must(t, a.AddFramework(FrameworkInfo{ID: protocol.FrameworkID(fmt.Sprintf("f%d", i)), Suppressed: true}))
			}
			addFw(t, a, "f9", "")
			o := offerOn(t, a.Allocate(t0).Offers, "f0", "a0")
			if _, err := a.Accept("f0", ids(o), []protocol.Resources{withPorts(res("mem", 85), 31012, 31012), res("cpus", 83)}, t0); err != nil {
				t.Fatal(err)
			}
			a.Shares()
			demand(t, a, "f8", Demand{Resources: res("gpus", 1), Count: 1})
			if err := checkInvariants(a); err != nil {
				t.Fatal(err)
			}
			if got, want := cachedStates(a), freshStates(a); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("cached %v, fresh %v", got, want)
			}
		})
	}
}
