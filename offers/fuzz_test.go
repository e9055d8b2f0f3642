package offers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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

func (z *fuzzRun) addAgent() {
	id := protocol.AgentID(fmt.Sprintf("a%d", len(z.agents)))
	if x := z.b(); x%8 == 0 && len(z.agents) > 0 {
		id = z.agents[x/8%len(z.agents)] // re-add, or a duplicate
	}
	total := res("cpus", int64(z.b()%16+1)*250, "mem", int64(z.b()%16)*256)
	if x := z.b(); x%4 == 0 {
		// Up to two GPU devices, or (x/4 odd) a plain gpus scalar.
		n := int64(x / 4 % 3)
		total.Scalars["gpus"] = n * protocol.DeviceMilli
		if x/12%2 == 0 {
			for k := range n {
				total.Scalars[protocol.GPUResource(int(k))] = protocol.DeviceMilli
			}
		}
	}
	if x := z.b(); x%2 == 0 {
		begin := 31000 + uint64(x%5)*4
		total = withPorts(total, begin, begin+uint64(z.b()%8))
	}
	attrs := protocol.Attributes{}
	if x := z.b(); x%4 != 0 {
		attrs["rack"] = protocol.Text(fmt.Sprintf("r%d", x%3))
	}
	_, live := z.a.agents[id]
	err := z.a.AddAgent(AgentInfo{ID: id, Hostname: string(id), Total: total, Attributes: attrs})
	if live != errors.Is(err, protocol.ErrDuplicate) || (!live && err != nil) {
		z.fail("AddAgent(%s) live=%v: %v", id, live, err)
	}
	if err == nil && !slices.Contains(z.agents, id) {
		z.agents = append(z.agents, id)
	}
	z.logf("AddAgent(%s, %s, %v) = %v", id, total, attrs, err)
}

// addFramework adds one framework, or sometimes a batch of nine under one
// role so that wide nodes (kept in sorted order) are exercised.
func (z *fuzzRun) addFramework() {
	n := 1
	if z.b()%4 == 0 {
		n = 9
	}
	role := fuzzRoles[z.b()%len(fuzzRoles)]
	for range n {
		z.addFrameworkIn(role)
	}
}

func (z *fuzzRun) addFrameworkIn(role string) {
	id := protocol.FrameworkID(fmt.Sprintf("f%d", len(z.fws)))
	if x := z.b(); x%8 == 0 && len(z.fws) > 0 {
		id = z.fws[x/8%len(z.fws)]
	}
	info := FrameworkInfo{ID: id, Role: role,
		Weight: []float64{0, 1, 2, 0.5}[z.b()%4], Suppressed: z.b()%8 == 0}
	_, live := z.a.frameworks[id]
	err := z.a.AddFramework(info)
	if live != errors.Is(err, protocol.ErrDuplicate) || (!live && err != nil) {
		z.fail("AddFramework(%s) live=%v: %v", id, live, err)
	}
	if err == nil && !slices.Contains(z.fws, id) {
		z.fws = append(z.fws, id)
	}
	z.logf("AddFramework(%+v) = %v", info, err)
}

// setDemand declares demand through SetDemand, Declare (demand, must-start
// and optional lists) or SetLeftoverDemand.
func (z *fuzzRun) setDemand() {
	id := z.fwID()
	before := snap(z.a)
	var err error
	switch mode := z.b() % 4; mode {
	case 0, 1:
		ds := z.demands()
		err = z.a.SetDemand(id, ds)
		z.logf("SetDemand(%s, %+v) = %v", id, ds, err)
	case 2:
		d := Declaration{Demand: z.demands(), MustStart: z.demands(), Optional: z.demands(),
			RemainingWork: []float64{0, 1, 2.5, 40}[z.b()%4]}
		for _, l := range []*[]Demand{&d.Demand, &d.MustStart, &d.Optional} {
			if z.b()%3 == 0 {
				*l = nil
			}
		}
		err = z.a.Declare(id, d)
		z.logf("Declare(%s, %+v) = %v", id, d, err)
	default:
		ds, work := z.demands(), []float64{0, 1, 3, -1}[z.b()%4]
		err = z.a.SetLeftoverDemand(id, ds, work)
		if _, live := z.a.frameworks[id]; live && work < 0 && !errors.Is(err, protocol.ErrInvalidArgument) {
			z.fail("SetLeftoverDemand with work %v: %v", work, err)
		}
		z.logf("SetLeftoverDemand(%s, %+v, %v) = %v", id, ds, work, err)
	}
	if err != nil {
		sameStateFuzz(z, "failed demand declaration", before)
	}
}

// demands reads one or two task shapes.
func (z *fuzzRun) demands() []Demand {
	var ds []Demand
	for range 1 + z.b()%2 {
		d := Demand{
			Resources: res("cpus", int64(z.b()%8)*125, "mem", int64(z.b()%4)*128),
			Ports:     z.b() % 3,
			Count:     []int64{1, 2, 3, 5, Unlimited, 0}[z.b()%6],
		}
		if x := z.b(); x%5 == 0 {
			// A share of one device, whole devices, or gpus spanning
			// devices.
			d.Resources.Scalars["gpus"] = []int64{1, 500, 1000, 2000, 1500}[x/5%5]
		}
		if false {
			d.Resources.Scalars["cpus"] = 125
		}
		switch x := z.b(); x % 4 {
		case 1:
			d.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: fmt.Sprintf("r%d", x%3)}}
		case 2:
			d.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r1", Soft: true}}
		case 3:
			d.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpUnique}}
		}
		ds = append(ds, d)
	}
	return ds
}

func (z *fuzzRun) allocate() {
	z.now = z.now.Add([]time.Duration{0, 100 * time.Millisecond, time.Second, 5 * time.Second, 31 * time.Second, time.Hour}[z.b()%6])
	before := map[protocol.OfferID]Offer{}
	for _, o := range z.a.Outstanding() {
		before[o.ID] = o
	}
	d := z.a.Allocate(z.now)
	for _, r := range d.Rescinds {
		o, ok := before[r.OfferID]
		if !ok || o.Expires.IsZero() || o.Expires.After(z.now) {
			z.fail("rescind of %s (%+v) at %v", r.OfferID, o, z.now)
		}
	}
	type pair struct {
		fw   protocol.FrameworkID
		ag   protocol.AgentID
		kind Kind
	}
	seen := map[pair]bool{}
	for _, o := range d.Offers {
		p := pair{o.FrameworkID, o.AgentID, o.Kind}
		if seen[p] {
			z.fail("two %s offers to %s on %s in one round", p.kind, p.fw, p.ag)
		}
		seen[p] = true
		f := z.a.frameworks[o.FrameworkID]
		if f == nil || f.suppressed {
			z.fail("offer %s to a suppressed or unknown framework", o.ID)
		}
		if o.Resources.IsEmpty() {
			z.fail("empty offer %s", o.ID)
		}
		if o.Kind == KindLeftover && (len(f.optional) == 0 || o.Tasks == 0) {
			z.fail("leftover offer %s of %d tasks to %s, which has %d optional shapes", o.ID, o.Tasks, f.id, len(f.optional))
		}
		if o.Kind != KindFair && o.Kind != KindLeftover {
			z.fail("offer %s of kind %q", o.ID, o.Kind)
		}
		if ag := z.a.agents[o.AgentID]; ag != nil && !z.a.rolesAdmit(f, ag) {
			z.fail("offer %s to %s on %s, which its roles' offer constraints exclude", o.ID, f.id, o.AgentID)
		}
	}
	z.logf("Allocate(%v) = %+v", z.now.Sub(t0), d)
	z.checkHeld()
}

// checkHeld: every role holds exactly what the frameworks below it do.
func (z *fuzzRun) checkHeld() {
	for path, n := range z.a.tree.roles {
		var want vec
		for _, f := range z.a.frameworks {
			if f.leaf.under(n) {
				want = want.add(f.alloc)
			}
		}
		if !vecEqual(n.held, want) {
			z.fail("role %q holds %v, its frameworks %v", path, n.held, want)
		}
	}
}

func (z *fuzzRun) accept() {
	o, ok := z.outstanding()
	if !ok {
		return
	}
	offers := []Offer{o}
	if z.b()%8 == 0 {
		if o2, ok := z.outstanding(); ok && o2.FrameworkID == o.FrameworkID {
			offers = append(offers, o2) // maybe the same offer, maybe another agent
		}
	}
	ports := o.Resources.Ranges[protocol.ResPorts]
	var tasks []protocol.Resources
	for range z.b() % 4 {
		tk := protocol.Resources{Scalars: map[string]int64{}}
		for _, name := range []string{"cpus", "mem", "gpus"} {
			if v := o.Resources.Scalars[name]; v > 0 {
				tk.Scalars[name] = v * int64(z.b()%4) / 3
			}
		}
		if x := z.b(); x%3 == 0 && ports.Count() > 0 {
			p := ports[0].Begin + uint64(x/3)%ports.Count()
			if p > ports[0].End {
				p = ports[0].End
			}
			tk = withPorts(tk, p, p)
		} else if x%16 == 1 {
			tk = withPorts(tk, 1, 1) // never offered
		}
		tasks = append(tasks, tk)
	}
	before := snap(z.a)
	acc, err := z.a.AcceptTasks(o.FrameworkID, ids(offers...), tasks, z.now)
	ag := acc.Agent
	if err != nil {
		sameStateFuzz(z, "failed Accept", before)
	} else {
		if ag != o.AgentID {
			z.fail("Accept returned agent %s, offer on %s", ag, o.AgentID)
		}
		if len(acc.Kinds) != len(tasks) {
			z.fail("Accept returned %d kinds for %d tasks", len(acc.Kinds), len(tasks))
		}
		for _, k := range acc.Kinds {
			if k != o.Kind && len(offers) == 1 {
				z.fail("task on a %s offer counted as %s", o.Kind, k)
			}
		}
		if _, live := z.a.Offer(o.ID); live {
			z.fail("accepted offer %s still outstanding", o.ID)
		}
	}
	z.logf("Accept(%s, %v, %v) = %s, %v", o.FrameworkID, ids(offers...), tasks, ag, err)
}

func (z *fuzzRun) decline() {
	o, ok := z.outstanding()
	if !ok {
		return
	}
	fw := o.FrameworkID
	if z.b()%8 == 0 {
		fw = z.fwID()
	}
	refuse := []time.Duration{DefaultFilter, 0, time.Second, 10 * time.Second, 400 * 24 * time.Hour}[z.b()%5]
	leftover := z.b()%3 == 0
	decline := z.a.Decline
	if leftover {
		decline = z.a.DeclineLeftover
	}
	before := snap(z.a)
	wasFiltered := false
	if f := z.a.frameworks[fw]; f != nil {
		wasFiltered = z.a.agents[o.AgentID].isFiltered(f.idx)
	}
	err := decline(fw, ids(o), refuse, z.now)
	switch {
	case fw == o.FrameworkID && err != nil:
		z.fail("Decline of own offer: %v", err)
	case fw != o.FrameworkID && err == nil:
		z.fail("Decline by %s of %s's offer succeeded", fw, o.FrameworkID)
	case err != nil:
		sameStateFuzz(z, "failed Decline", before)
	}
	if ag := z.a.agents[o.AgentID]; err == nil && leftover && refuse <= 0 && !wasFiltered && ag.isFiltered(z.a.frameworks[fw].idx) {
		z.fail("DeclineLeftover(%s, %s, %v) installed a filter", fw, o.ID, refuse)
	}
	z.logf("Decline(%s, %s, %v, leftover=%v) = %v", fw, o.ID, refuse, leftover, err)
}

func (z *fuzzRun) recover() {
	type held struct {
		ag *agent
		f  *framework
	}
	var hs []held
	for _, ag := range z.a.agentList {
		for _, f := range z.a.frameworksOn(ag) {
			hs = append(hs, held{ag, f})
		}
	}
	slices.SortFunc(hs, func(x, y held) int {
		return cmpStrings(string(x.ag.id)+"/"+string(x.f.id), string(y.ag.id)+"/"+string(y.f.id))
	})
	if len(hs) == 0 {
		return
	}
	h := hs[z.b()%len(hs)]
	u := h.ag.usage[h.f]
	r := z.a.reg.toResources(u.res)
	frac := int64(z.b() % 5)
	for k, v := range r.Scalars {
		r.Scalars[k] = v * frac / 4
	}
	if p, ok := u.ports.Take(uint64(z.b() % 3)); ok && len(p) > 0 {
		r = withPorts(r, p[0].Begin, p[len(p)-1].End)
	}
	x := z.b()
	switch {
	case x%7 == 0:
		r = r.Add(res("cpus", 1)) // more than held unless held is bigger
	case x%11 == 1:
		r = res("cpus", -125)
	}
	before := snap(z.a)
	err := z.a.Recover(h.f.id, h.ag.id, r)
	if err != nil {
		sameStateFuzz(z, "failed Recover", before)
	}
	z.logf("Recover(%s, %s, %s) = %v", h.f.id, h.ag.id, r, err)
}

func cmpStrings(x, y string) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func (z *fuzzRun) removeAgent() {
	id := z.agentID()
	ag := z.a.agents[id]
	if false {
		return
	}
	var want []protocol.OfferID
	for _, o := range z.a.Outstanding() {
		if o.AgentID == id {
			want = append(want, o.ID)
		}
	}
	rs, err := z.a.RemoveAgent(id)
	if (ag == nil) != errors.Is(err, protocol.ErrUnknownAgent) {
		z.fail("RemoveAgent(%s) live=%v: %v", id, ag != nil, err)
	}
	z.checkRescinds("RemoveAgent", rs, want)
	z.logf("RemoveAgent(%s) = %+v, %v", id, rs, err)
}

func (z *fuzzRun) removeFramework() {
	id := z.fwID()
	_, live := z.a.frameworks[id]
	var want []protocol.OfferID
	for _, o := range z.a.Outstanding() {
		if o.FrameworkID == id {
			want = append(want, o.ID)
		}
	}
	rs, err := z.a.RemoveFramework(id)
	if live == (err != nil) {
		z.fail("RemoveFramework(%s) live=%v: %v", id, live, err)
	}
	z.checkRescinds("RemoveFramework", rs, want)
	z.logf("RemoveFramework(%s) = %+v, %v", id, rs, err)
}

func (z *fuzzRun) checkRescinds(what string, rs []Rescind, want []protocol.OfferID) {
	var got []protocol.OfferID
	for _, r := range rs {
		got = append(got, r.OfferID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		z.fail("%s rescinded %v, want %v", what, got, want)
	}
	for _, id := range want {
		if _, live := z.a.Offer(id); live {
			z.fail("%s left offer %s outstanding", what, id)
		}
	}
}

func (z *fuzzRun) rescind() {
	var pick []protocol.OfferID
	for _, o := range z.a.Outstanding() {
		if z.b()%3 == 0 {
			pick = append(pick, o.ID)
		}
	}
	pick = append(pick, "o-forged")
	rs := z.a.Rescind(pick, "fuzz")
	if len(rs) != len(pick)-1 {
		z.fail("Rescind(%v) = %d rescinds", pick, len(rs))
	}
	z.logf("Rescind(%v) = %+v", pick, rs)
}

// forged sends operations with unknown or foreign IDs; each must fail with
// its sentinel and change nothing.
func (z *fuzzRun) forged() {
	before := snap(z.a)
	var err, want error
	kind := z.b() % 9
	o, haveOffer := z.outstanding()
	fw := z.fwID()
	_, fwLive := z.a.frameworks[fw]
	switch kind {
	case 0:
		_, err = z.a.Accept("f-forged", []protocol.OfferID{"o-1"}, []protocol.Resources{res("cpus", 1)}, z.now)
		want = protocol.ErrUnknownFramework
	case 1:
		_, err = z.a.Accept(fw, []protocol.OfferID{"o-forged"}, []protocol.Resources{res("cpus", 1)}, z.now)
		want = protocol.ErrUnknownOffer
	case 2:
		if !haveOffer || !fwLive || o.FrameworkID == fw {
			return
		}
		_, err = z.a.Accept(fw, ids(o), []protocol.Resources{res("cpus", 1)}, z.now)
		want = protocol.ErrUnknownOffer
	case 3:
		err = z.a.Decline(fw, []protocol.OfferID{"o-forged"}, time.Hour, z.now)
		want = protocol.ErrUnknownOffer
	case 4:
		err = z.a.Recover(fw, "a-forged", res("cpus", 1))
		want = protocol.ErrUnknownAgent
	case 5:
		_, err = z.a.RemoveAgent("a-forged")
		want = protocol.ErrUnknownAgent
	case 6:
		err = z.a.SetDemand("f-forged", []Demand{{Resources: res("cpus", 1), Count: 1}})
		want = protocol.ErrUnknownFramework
	case 7:
		err = z.a.Decline(fw, nil, time.Hour, z.now)
		want = protocol.ErrInvalidArgument
	default:
		if !haveOffer || !fwLive || o.FrameworkID == fw {
			return
		}
		err = z.a.Decline(fw, ids(o), time.Hour, z.now)
		want = protocol.ErrUnknownOffer
	}
	if !fwLive && kind != 0 && kind != 5 && kind != 6 {
		want = protocol.ErrUnknownFramework
	}
	if !errors.Is(err, want) {
		z.fail("forged op %d: got %v, want %v", kind, err, want)
	}
	sameStateFuzz(z, fmt.Sprintf("forged op %d", kind), before)
	z.logf("forged %d = %v", kind, err)
}

func sameStateFuzz(z *fuzzRun, what string, before snapshot) {
	if after := snap(z.a); fmt.Sprint(before) != fmt.Sprint(after) {
		z.fail("%s changed state:\n got  %+v\n want %+v", what, after, before)
	}
}
