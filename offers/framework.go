package offers

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Unlimited is the Count of a demand whose number of tasks has no bound.
const Unlimited int64 = math.MaxInt64

// FrameworkInfo describes a framework to the allocator.
type FrameworkInfo struct {
	ID protocol.FrameworkID
	// Role is the role path the framework subscribes into ("" is the root).
	// Missing roles are created with weight 1.
	Role string
	// Weight of the framework's leaf among its siblings (default 1).
	Weight float64
	// Suppressed frameworks receive no offers until revived.
	Suppressed bool
	// NoRevocable frameworks take no revocable resources: no leftover
	// offer is made to them, whatever they declare.
	NoRevocable bool
}

// Demand is one pending task shape a framework declares: Count tasks, each
// needing Resources (scalars) and Ports ports, placed only on agents whose
// attributes satisfy the hard Constraints. Soft constraints filter the same
// way until the shape has waited Config.SoftWait, then relax (crvsoft.go);
// group constraints are the framework's business.
type Demand struct {
	Resources   protocol.Resources
	Ports       int
	Count       int64
	Constraints []protocol.Constraint
}

// shape is a declared demand entry with its bookkeeping.
type shape struct {
	key     string
	res     vec
	ports   uint64
	gpu     gpuNeed
	ckey    [2]string // its constraints, as they hold and relaxed (placement_pack.go)
	hard    []protocol.Constraint
	soft    []protocol.Constraint // per-task soft constraints
	count   int64                 // declared pending tasks (Unlimited for no bound)
	offered int64                 // task units of this shape in outstanding offers

	// Constraint Resource Vector bookkeeping (crv.go): the classes of the
	// hard and of the soft constraints, the units last counted as demand
	// and whether the soft classes were counted too.
	cls, softCls []*crvClass
	crvUnits     int64
	crvSoft      bool
	// Soft constraints (crvsoft.go): when the shape was first seen waiting
	// and whether its soft constraints have relaxed.
	since    time.Time
	relaxed  bool
	feasVer  uint64 // crvIndex.agentVer+1 when feasible was computed
	feasible bool
}

// constrained reports whether placing s depends on agent attributes:
// hard constraints, or soft ones not yet relaxed.
func (s *shape) constrained() bool {
	return len(s.hard) > 0 || len(s.soft) > 0 && !s.relaxed
}

func (s *shape) pending() int64 {
	if s.count == Unlimited {
		return Unlimited
	}
	if p := s.count - s.offered; p > 0 {
		return p
	}
	return 0
}

func shapeKey(d Demand) string {
	var b strings.Builder
	b.WriteString(d.Resources.String())
	b.WriteString("|p")
	b.WriteString(strconv.FormatInt(int64(d.Ports), 10))
	for _, c := range d.Constraints {
		if !c.IsGroup() {
			b.WriteString("|" + c.String())
		}
	}
	return b.String()
}

// framework is a leaf of the role tree with its usage and demand.
type framework struct {
	id   protocol.FrameworkID
	idx  int // dense index for per-agent filter bitsets
	leaf *node

	used    vec // scalars of running tasks, cluster-wide
	offered vec // scalars in outstanding offers, cluster-wide
	alloc   vec // used + offered: what shares are computed from

	declared    bool
	shapes      []*shape         // fair demand
	lastDemand  []Demand         // what shapes were built from (demand_same.go)
	optional    []*shape         // leftover candidates
	work        float64          // remaining work in task-seconds, 0 unknown
	launched    map[string]int64 // running tasks per shape key (static targets)
	launchRes   map[string]vec   // the scalars of each key in launched
	suppressed  bool
	noRevocable bool
	offers      offerSet

	// Flags last reported to the tree's subtree counters, and the shape keys
	// last reported to the shape index.
	countedDemanding, countedOpen bool
	contrib                       []string
}

func (f *framework) shapeByKey(key string) *shape {
	for _, s := range f.shapes {
		if s.key == key {
			return s
		}
	}
	return nil
}

func (f *framework) demanding() bool {
	if f.suppressed || !f.declared {
		return false
	}
	for _, s := range f.shapes {
		if s.pending() > 0 {
			return true
		}
	}
	return false
}

func (f *framework) open() bool { return !f.suppressed && !f.declared }

// wantsLeftover reports whether some leftover candidate has pending tasks.
func (f *framework) wantsLeftover() bool {
	if f.suppressed || f.noRevocable {
		return false
	}
	for _, s := range f.optional {
		if s.pending() > 0 {
			return true
		}
	}
	return false
}

// shapesOf returns the framework's shapes of the given kind.
func (f *framework) shapesOf(k Kind) []*shape {
	if k == KindLeftover {
		return f.optional
	}
	return f.shapes
}

// shapeFor finds the declared shape whose resources equal res, if any.
func (f *framework) shapeFor(res vec) *shape {
	for _, s := range f.shapes {
		if vecEqual(s.res, res) {
			return s
		}
	}
	for _, s := range f.optional {
		if vecEqual(s.res, res) {
			return s
		}
	}
	return nil
}

func vecEqual(a, b vec) bool {
	n := max(len(a), len(b))
	for i := 0; i < n; i++ {
		if a.at(i) != b.at(i) {
			return false
		}
	}
	return true
}
