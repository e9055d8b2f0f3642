package offers

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// The Constraint Resource Vector (docs/phoenix.md): per constraint
// class, the pending fair demand that needs it, the resources of the agents
// that satisfy it, and their ratio. It is kept incrementally:
//
//   - a class is interned when a fair shape using it is installed and
//     dropped when the last such shape goes; creating one evaluates it
//     against every agent once;
//   - an agent that joins is evaluated against every class once, and keeps
//     the list of classes it satisfies, so a change of its free resources
//     updates exactly those classes;
//   - a shape's demand is re-counted whenever its framework is refreshed
//     (every declaration, offer, decline, accept, suppression), by the
//     difference from what it counted last.
//
// Nothing here is recomputed per round over all shapes and agents; the
// round (crvround.go) only looks at classes with pending demand.

// crvMaxUnits caps the units one shape counts as demand, so that counts
// and products stay exact in int64 (an Unlimited shape counts this many).
const crvMaxUnits = 1 << 16

// crvMaxAmount caps one shape's demand per resource for the same reason.
const crvMaxAmount = 1 << 40

// crvClass is one constraint class: a normalised per-task predicate.
type crvClass struct {
	key  string              // canonical form, e.g. `gpu == "a100"`
	c    protocol.Constraint // normalised (hard, sorted values)
	refs int                 // installed fair shapes that use it
	seq  uint64              // creation order

	agents int   // agents satisfying it
	supply vec   // their total resources
	free   vec   // their free resources
	demand vec   // pending fair demand needing it (units × resources)
	tasks  int64 // pending fair units needing it

	contended bool    // set for the current round (crvround.go)
	ratio     float64 // cached by the round
}

// crvIndex interns constraint classes.
type crvIndex struct {
	byKey map[string]*crvClass
	list  []*crvClass // creation order
	seq   uint64
	soft  []*shape // installed fair shapes with soft constraints
	// agentVer changes when agents join or leave (soft feasibility).
	agentVer uint64
	// idle are classes no shape uses any more, oldest first, kept for
	// the next shape that names them (a framework whose demand comes and
	// goes), up to maxIdleClasses; a class used again leaves the list
	// when it comes first.
	idle []*crvClass
	// groups are the crvGroups by their classes' sequence numbers;
	// groupOf is each agent's by index, as of classesVer groupsAt
	// (classesVer counts changes of agents and their classes).
	groups               map[string]*crvGroup
	groupOf              []*crvGroup
	classesVer, groupsAt uint64
	// round counts the rounds that steered, for crvGroup.round.
	round uint64
	// turn is the order of one round's agent turns (crvround.go).
	turn crvRound
}

// maxIdleClasses bounds the classes kept with no shape using them.
const maxIdleClasses = 256

// ConstraintLoad is one row of the Constraint Resource Vector, for the
// operator API: a constraint class, the pending fair demand that needs it,
// the resources of the agents that satisfy it, and their ratio.
type ConstraintLoad struct {
	// Constraint is the class's canonical form, e.g. `gpu == "a100"` or
	// `rack in [r1 r2]` (values sorted).
	Constraint string
	// Agents is how many agents satisfy it.
	Agents int
	// Tasks is how many tasks of declared fair shapes need it: pending,
	// offered or running (each shape counts at most 65,536 declared and
	// 65,536 running, so an unbounded shape counts that many).
	Tasks int64
	// Demand is those tasks' resources; Supply the total and Free the free
	// resources of the agents that satisfy the class.
	Demand, Supply, Free protocol.Resources
	// Ratio is the dominant demand-to-supply ratio: the largest
	// Demand[r]/Supply[r] over the resources the demand asks for. When no
	// satisfying agent has a resource the demand asks for, Ratio is
	// math.MaxFloat64 and Unsatisfiable is set.
	Ratio         float64
	Unsatisfiable bool
	// Contended says whether the allocation round steers by this class:
	// CRV steering is on, some but not all agents satisfy it, and Ratio
	// reaches Config.CRVMinRatio.
	Contended bool
}

// CRV returns the Constraint Resource Vector: one row per constraint class
// that some declared fair shape uses, highest ratio first, ties by the
// constraint's canonical form.
func (a *Allocator) CRV() []ConstraintLoad {
	out := make([]ConstraintLoad, 0, len(a.crv.list))
	for _, c := range a.crv.list {
		if c.refs == 0 {
			continue // idle
		}
		r, unsat := c.dominantRatio()
		out = append(out, ConstraintLoad{
			Constraint:    c.key,
			Agents:        c.agents,
			Tasks:         c.tasks,
			Demand:        a.reg.toResources(c.demand),
			Supply:        a.reg.toResources(c.supply),
			Free:          a.reg.toResources(c.free),
			Ratio:         r,
			Unsatisfiable: unsat,
			Contended:     a.steers(c, r),
		})
	}
	slices.SortFunc(out, func(x, y ConstraintLoad) int {
		if c := cmp.Compare(y.Ratio, x.Ratio); c != 0 {
			return c
		}
		return strings.Compare(x.Constraint, y.Constraint)
	})
	return out
}

// dominantRatio is max over resources of demand/supply; math.MaxFloat64
// (and true) when the demand asks for a resource the supply lacks.
func (c *crvClass) dominantRatio() (float64, bool) {
	r := 0.0
	for j, d := range c.demand {
		if d <= 0 {
			continue
		}
		s := c.supply.at(j)
		if s <= 0 {
			return math.MaxFloat64, true
		}
		r = max(r, float64(d)/float64(s))
	}
	return r, false
}

// steers reports whether the round steers by class c with ratio r
// (crvround.go): CRV on, some but not all agents satisfy it, and the ratio
// reaches Config.CRVMinRatio. A declared shape using it suffices, even with
// no task pending or running: keeping the agents that can serve it for last
// is what lets its next tasks find them free.
func (a *Allocator) steers(c *crvClass, r float64) bool {
	return !a.cfg.DisableCRV && c.agents > 0 && c.agents < len(a.agentList) && r >= a.cfg.CRVMinRatio
}

// classKey normalises a per-task constraint into its class (ClassKey).
func classKey(c protocol.Constraint) (string, protocol.Constraint) {
	return ClassKey(c)
}

// crvInstall interns the classes of newly installed fair shapes and
// releases those of the shapes they replace. New shapes are interned first,
// so a class both use survives without being re-evaluated.
func (a *Allocator) crvInstall(shapes, old []*shape) {
	for _, s := range shapes {
		if len(s.hard)+len(s.soft) == 0 {
			continue
		}
		s.cls = a.crvIntern(s.cls[:0], s.hard)
		s.softCls = a.crvIntern(s.softCls[:0], s.soft)
		if len(s.soft) > 0 {
			if a.cfg.SoftWait <= 0 {
				s.relaxed = true
			}
			a.crv.soft = append(a.crv.soft, s)
		}
	}
	for _, s := range old {
		if len(s.cls)+len(s.softCls) == 0 {
			continue
		}
		a.crvCount(s, 0, false)
		for _, c := range s.cls {
			a.crvUnref(c)
		}
		for _, c := range s.softCls {
			a.crvUnref(c)
		}
		s.cls, s.softCls = nil, nil
		if len(s.soft) > 0 {
			a.crv.soft = slices.DeleteFunc(a.crv.soft, func(x *shape) bool { return x == s })
		}
	}
}

// crvIntern appends the classes of cs to dst, creating missing ones.
func (a *Allocator) crvIntern(dst []*crvClass, cs []protocol.Constraint) []*crvClass {
	for _, con := range cs {
		key, norm := classKey(con)
		c := a.crv.byKey[key]
		if c == nil {
			c = a.newClass(key, norm)
		}
		c.refs++
		dst = append(dst, c)
	}
	return dst
}

// newClass creates a class and evaluates it against every agent.
func (a *Allocator) newClass(key string, norm protocol.Constraint) *crvClass {
	if a.crv.byKey == nil {
		a.crv.byKey = map[string]*crvClass{}
	}
	a.crv.seq++
	c := &crvClass{key: key, c: norm, seq: a.crv.seq}
	a.crv.byKey[key] = c
	a.crv.list = append(a.crv.list, c)
	for _, ag := range a.agentList {
		if norm.Holds(ag.info.Attributes) {
			c.join(ag)
		}
	}
	a.crv.classesVer++
	return c
}

// join counts ag as satisfying c.
func (c *crvClass) join(ag *agent) {
	ag.classes, ag.crvGroup = append(ag.classes, c), nil
	c.agents++
	c.supply = c.supply.add(ag.total)
	c.free = c.free.add(ag.free)
}

// crvUnref drops a reference to c. A class without references is kept
// idle; the oldest idle ones beyond maxIdleClasses are deleted.
func (a *Allocator) crvUnref(c *crvClass) {
	c.refs--
	if c.refs > 0 {
		return
	}
	a.crv.idle = append(a.crv.idle, c)
	for len(a.crv.idle) > maxIdleClasses {
		old := a.crv.idle[0]
		a.crv.idle = a.crv.idle[1:]
		if old.refs == 0 && !slices.Contains(a.crv.idle, old) {
			a.dropClass(old)
		}
	}
}

// dropClass deletes a class no shape uses.
func (a *Allocator) dropClass(c *crvClass) {
	delete(a.crv.byKey, c.key)
	a.crv.list = slices.DeleteFunc(a.crv.list, func(x *crvClass) bool { return x == c })
	for _, ag := range a.agentList {
		if slices.Contains(ag.classes, c) {
			ag.classes = slices.DeleteFunc(ag.classes, func(x *crvClass) bool { return x == c })
		}
		ag.crvGroup = nil
	}
	clear(a.crv.groups)
	a.crv.classesVer++
}

// crvAgentAdded evaluates a new agent against every class.
func (a *Allocator) crvAgentAdded(ag *agent) {
	a.crv.agentVer++
	a.crv.classesVer++
	for _, c := range a.crv.list {
		if c.c.Holds(ag.info.Attributes) {
			c.join(ag)
		}
	}
}

// crvAgentRemoved takes a leaving agent out of its classes.
func (a *Allocator) crvAgentRemoved(ag *agent) {
	a.crv.agentVer++
	a.crv.classesVer++
	for _, c := range ag.classes {
		c.agents--
		c.supply = c.supply.sub(ag.total)
		c.free = c.free.sub(ag.free)
	}
	ag.classes, ag.crvGroup = nil, nil
}

// crvRefresh re-counts the demand of f's constrained fair shapes: their
// outstanding units (docs/phoenix.md), declared (pending or offered)
// plus running, while f is neither suppressed nor undeclared, else none.
func (a *Allocator) crvRefresh(f *framework) {
	active := f.declared && !f.suppressed
	for _, s := range f.shapes {
		if len(s.cls)+len(s.softCls) == 0 {
			continue
		}
		units := int64(0)
		if active {
			units = min(s.count, crvMaxUnits) + min(f.launched[s.key], crvMaxUnits)
		}
		a.crvCount(s, units, !s.relaxed)
	}
}

// crvCount makes s count units of demand on its hard classes, and on its
// soft ones when withSoft, undoing what it counted before.
func (a *Allocator) crvCount(s *shape, units int64, withSoft bool) {
	if units == s.crvUnits && withSoft == s.crvSoft {
		return
	}
	if s.crvUnits > 0 {
		s.addDemand(s.crvUnits, s.crvSoft, -1)
	}
	if units > 0 {
		s.addDemand(units, withSoft, 1)
	}
	s.crvUnits, s.crvSoft = units, withSoft
}

func (s *shape) addDemand(units int64, withSoft bool, sign int64) {
	each := func(c *crvClass) {
		c.tasks += sign * units
		c.demand = c.demand.grow(len(s.res))
		for j, x := range s.res {
			c.demand[j] += sign * satMul(units, x)
		}
	}
	for _, c := range s.cls {
		each(c)
	}
	if withSoft {
		for _, c := range s.softCls {
			each(c)
		}
	}
}

// satMul is n·x capped at crvMaxAmount (n, x >= 0).
func satMul(n, x int64) int64 {
	if x == 0 {
		return 0
	}
	if n > crvMaxAmount/x {
		return crvMaxAmount
	}
	return min(n*x, crvMaxAmount)
}
