package offers

import (
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

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
