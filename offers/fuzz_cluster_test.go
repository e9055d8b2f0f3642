package offers

import (
	"errors"
	"fmt"
	"slices"

	"github.com/allot-project/allot/protocol"
)

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
