package offers

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// FuzzAllocator reads its input as a configuration followed by a sequence
// of operations, checks the allocator's invariants after every operation,
// and replays the input on a second allocator to check that every decision
// and error is identical.
func FuzzAllocator(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		first := runFuzz(t, in)
		// The replay builds every demand in full, without the shortcut
		// for a re-declaration that changes counts only (demand_same.go):
		// the decisions must not tell them apart.
		second := runFuzzWith(t, in, true)
		for i := range min(len(first), len(second)) {
			if first[i] != second[i] {
				t.Fatalf("replay differs at step %d:\n first  %s\n second %s", i, first[i], second[i])
			}
		}
		if len(first) != len(second) {
			t.Fatalf("replay length: %d vs %d", len(first), len(second))
		}
	})
}

func fuzzSeeds() [][]byte {
	seeds := [][]byte{
		{},
		// dynamic, 30s timeout: 2 agents, 2 frameworks, demand, rounds, accept.
		{0, 0, 0, 0, 7, 3, 0, 1, 0, 0, 9, 9, 1, 1, 1, 0, 1, 2, 0, 0, 2, 0, 0, 3, 2, 0, 1, 0, 6, 2, 6, 1, 8, 0, 2, 1, 9, 6, 3, 10, 0, 1},
		// static, no timeout, undeclared frameworks only.
		{1, 1, 1, 0, 15, 15, 4, 1, 1, 3, 0, 0, 1, 4, 1, 0, 6, 1, 6, 4, 8, 1, 0, 6, 5, 11, 0, 6, 2},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 6 {
		s := make([]byte, 200+100*i)
		for j := range s {
			s[j] = byte(r.IntN(256))
		}
		s[0] = byte(i)
		seeds = append(seeds, s)
	}
	return seeds
}

const maxFuzzSteps = 300

// fuzzRun interprets one fuzz input.
type fuzzRun struct {
	t      *testing.T
	a      *Allocator
	policy Policy
	in     []byte
	pos    int
	now    time.Time
	agents []protocol.AgentID     // every agent ID ever added
	fws    []protocol.FrameworkID // every framework ID ever added
	trace  []string
}

func (z *fuzzRun) b() int {
	if z.pos >= len(z.in) {
		return 0
	}
	c := z.in[z.pos]
	z.pos++
	return int(c)
}

func (z *fuzzRun) logf(format string, args ...any) {
	z.trace = append(z.trace, fmt.Sprintf(format, args...))
}

func (z *fuzzRun) fail(format string, args ...any) {
	z.t.Helper()
	tail := z.trace[max(0, len(z.trace)-15):]
	z.t.Fatalf("%s (policy %s)\nlast steps:\n  %s", fmt.Sprintf(format, args...), z.policy, joinLines(tail))
}

func joinLines(ls []string) string {
	out := ""
	for i, l := range ls {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out
}

func runFuzz(t *testing.T, in []byte) []string { return runFuzzWith(t, in, false) }

// runFuzzWith interprets one fuzz input, with demand built in full every
// time when fullDemand.
func runFuzzWith(t *testing.T, in []byte, fullDemand bool) []string {
	z := &fuzzRun{t: t, in: in, now: t0}
	cfg := DefaultConfig()
	z.policy = Policies()[z.b()%len(Policies())]
	cfg.Policy = z.policy
	cfg.OfferTimeout = []time.Duration{30 * time.Second, 0, 2 * time.Second}[z.b()%3]
	if z.b()%2 == 1 {
		cfg.MinAllocatable = nil
	}
	x := z.b()
	cfg.LeftoverOrder = LeftoverOrders()[x%len(LeftoverOrders())]
	cfg.LeftoverWorkWeight = []float64{0, 1, 0.5}[x/2%3]
	cfg.DisableCRV = x/6%2 == 1
	cfg.SoftWait = []time.Duration{5 * time.Second, 0, time.Second}[x/12%3]
	cfg.Placement = []Placement{PlacementSpread, PlacementFirstFit, PlacementPack}[x/36%3]
	z.a = newAlloc(t, cfg)
	z.a.fullDemand = fullDemand
	for step := 0; step < maxFuzzSteps && z.pos < len(z.in); step++ {
		z.step()
		if err := checkInvariants(z.a); err != nil {
			z.fail("step %d: %v", step, err)
		}
		if err := checkAvailability(z.a); err != nil {
			z.fail("step %d: %v", step, err)
		}
	}
	return z.trace
}

// agentID picks any agent ID ever added (possibly removed), or a fresh one.
func (z *fuzzRun) agentID() protocol.AgentID {
	if len(z.agents) == 0 {
		return "a-none"
	}
	return z.agents[z.b()%len(z.agents)]
}

func (z *fuzzRun) fwID() protocol.FrameworkID {
	if len(z.fws) == 0 {
		return "f-none"
	}
	return z.fws[z.b()%len(z.fws)]
}

// outstanding picks an outstanding offer.
func (z *fuzzRun) outstanding() (Offer, bool) {
	os := z.a.Outstanding()
	if len(os) == 0 {
		return Offer{}, false
	}
	return os[z.b()%len(os)], true
}

var fuzzRoles = []string{"", "eng", "eng/prod", "eng/dev", "research", "research/ml/deep"}

func (z *fuzzRun) step() {
	op := z.b() % 26
	switch {
	case op < 3:
		z.addAgent()
	case op < 5:
		z.addFramework()
	case op < 8:
		z.setDemand()
	case op == 8:
		id := z.fwID()
		z.logf("ClearDemand(%s) = %v", id, z.a.ClearDemand(id))
	case op == 9:
		id := z.fwID()
		z.logf("Suppress(%s) = %v", id, z.a.Suppress(id))
	case op == 10:
		id := z.fwID()
		z.logf("Revive(%s) = %v", id, z.a.Revive(id))
	case op < 15:
		z.allocate()
	case op < 18:
		z.accept()
	case op < 20:
		z.decline()
	case op == 20:
		z.recover()
	case op == 21:
		z.removeAgent()
	case op == 22:
		z.removeFramework()
	case op == 23:
		z.forged()
	case op == 24:
		z.rescind()
	default:
		switch z.b() % 6 {
		case 5:
			id, path := z.fwID(), fuzzRoles[z.b()%len(fuzzRoles)]
			err := z.a.MoveFramework(id, path, float64(1+z.b()%3))
			z.logf("MoveFramework(%s, %q) = %v", id, path, err)
		case 3, 4:
			// A role's quota (a guarantee or a limit, zero to remove it) or
			// offer constraints.
			path := fuzzRoles[1+z.b()%(len(fuzzRoles)-1)]
			r := res("cpus", int64(z.b()%6)*250)
			var err error
			switch z.b() % 3 {
			case 0:
				err = z.a.SetRoleGuarantee(path, r)
				z.logf("SetRoleGuarantee(%q, %s) = %v", path, r, err)
			case 1:
				err = z.a.SetRoleLimit(path, r)
				z.logf("SetRoleLimit(%q, %s) = %v", path, r, err)
			default:
				var cs []protocol.Constraint
				if x := z.b() % 3; x > 0 {
					cs = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: fmt.Sprintf("r%d", x)}}
				}
				err = z.a.SetRoleOfferConstraints(path, cs)
				z.logf("SetRoleOfferConstraints(%q, %v) = %v", path, cs, err)
			}
			if err != nil {
				z.fail("quota on %q: %v", path, err)
			}
		case 0:
			path, w := fuzzRoles[z.b()%len(fuzzRoles)], []float64{1, 2, 3, 0.5, 0}[z.b()%5]
			err := z.a.SetRole(path, w)
			if (w == 0) != (err != nil) {
				z.fail("SetRole(%q, %v) = %v", path, w, err)
			}
			z.logf("SetRole(%q, %v) = %v", path, w, err)
		case 1:
			z.now = z.now.Add(time.Duration(z.b()) * 100 * time.Millisecond)
			rs := z.a.Expire(z.now)
			z.logf("Expire(%v) = %+v", z.now.Sub(t0), rs)
		default:
			fw, ag := z.fwID(), z.agentID()
			r := res("cpus", int64(z.b()%4)*125)
			err := z.a.AddUsage(fw, ag, r)
			z.logf("AddUsage(%s, %s, %s) = %v", fw, ag, r, err)
		}
	}
}
