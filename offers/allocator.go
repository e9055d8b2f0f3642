package offers

import (
	"fmt"
	"time"

	"github.com/allot-project/allot/internal/heapq"
	"github.com/allot-project/allot/protocol"
)

// Allocator is the allocation state machine. Create it with New and feed it
// events; every method is deterministic in its inputs.
type Allocator struct {
	cfg Config
	// rules are cfg.Policy's (policy.go).
	rules *policyRules
	reg   *registry
	tree  *tree
	// limits counts the roles with a quota limit (quota.go).
	limits int
	// guaranteedRoles are the roles with a quota guarantee (guarantee.go).
	guaranteedRoles []*node
	// outerGuaranteed are those no guaranteed role lies above, whose unmet
	// guarantees the headroom holds (kept with guaranteedRoles).
	outerGuaranteed []*node
	// constrainedRoles counts the roles with offer constraints
	// (roleconstraints.go).
	constrainedRoles int

	frameworks map[protocol.FrameworkID]*framework
	fwByIdx    []*framework
	freeIdx    []int

	agents    map[protocol.AgentID]*agent
	agentList []*agent // registration order; rounds start at a rotating cursor
	cursor    int

	offers   map[uint64]*offer // by sequence number (book.go's lookup)
	expiryQ  []*offer          // creation order; expiry is monotone for a fixed timeout
	filterQ  *heapq.Heap[filterEntry]
	offerSeq uint64
	// lastOffers is how many offers the previous round made: the next
	// round's slice of offers starts that large rather than growing to it.
	lastOffers int
	// idBuf and heldBuf are scratch space for offer IDs and the offers a
	// call names (the allocator is not safe for concurrent use).
	idBuf   []byte
	heldBuf []*offer

	capacity vec    // sum of agent totals
	ver      uint64 // bumped when capacity or availability changes
	avail    availability
	stamp    uint64 // walk stamp: marks subtrees found empty for an agent
	evalSeq  uint64 // counts evaluations that changed a node; versions whole-task walks
	capSeq   uint64 // counts capacity changes

	shapes    shapeIndex
	static    staticTargets
	collapsed collapsedWeights
	fair      fairShares
	// crv is the constraint classes, their Constraint Resource Vector
	// and the order they give a round's turns (crv.go).
	crv     crvIndex
	pack    packState
	freeSeq uint64 // numbers changes of agents' free pools (agent.ver)
	// fullDemand turns off the shortcut of demand_same.go (tests).
	fullDemand bool

	// leftover is the leftover phase's own state (leftover.go).
	leftover leftoverState
	// preempt remembers when needs began (preempt.go).
	preempt preemptState
}

// New returns an empty allocator.
func New(cfg Config) (*Allocator, error) {
	if cfg.Policy == "" {
		cfg.Policy = PolicyDynamic
	}
	if cfg.OfferIDPrefix == "" {
		cfg.OfferIDPrefix = "o"
	}
	if cfg.LeftoverOrder == "" {
		cfg.LeftoverOrder = LeftoverJCTFirst
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Preemption = cfg.Preemption.withDefaults()
	a := &Allocator{
		cfg:        cfg,
		rules:      rulesOf(cfg.Policy),
		filterQ:    newFilterQueue(),
		reg:        newRegistry(),
		tree:       newTree(),
		frameworks: map[protocol.FrameworkID]*framework{},
		agents:     map[protocol.AgentID]*agent{},
		offers:     map[uint64]*offer{},
		ver:        1,
	}
	a.avail.init()
	return a, nil
}

// Policy returns the configured policy.
func (a *Allocator) Policy() Policy { return a.cfg.Policy }

// SetRole creates or updates the role at path with weight (> 0). Ancestors
// that do not exist yet are created with weight 1.
func (a *Allocator) SetRole(path string, weight float64) error {
	if !(weight > 0) {
		return fmt.Errorf("%w: role %q weight %v", ErrInvalid, path, weight)
	}
	n, err := a.tree.role(path, true)
	if err != nil {
		return err
	}
	if n.weight != weight {
		n.weight = weight
		a.tree.invalidate(n)
		a.changed()
	}
	return nil
}

// AddFramework adds a framework leaf under its role.
func (a *Allocator) AddFramework(info FrameworkInfo) error {
	if !protocol.ValidID(string(info.ID)) {
		return fmt.Errorf("%w: framework ID %q", ErrInvalid, info.ID)
	}
	if _, ok := a.frameworks[info.ID]; ok {
		return fmt.Errorf("%w: framework %s", ErrDuplicate, info.ID)
	}
	if info.Weight == 0 {
		info.Weight = 1
	}
	if !(info.Weight > 0) {
		return fmt.Errorf("%w: framework weight %v", ErrInvalid, info.Weight)
	}
	role, err := a.tree.role(info.Role, true)
	if err != nil {
		return err
	}
	f := &framework{
		id:          info.ID,
		launched:    map[string]int64{},
		launchRes:   map[string]vec{},
		offers:      offerSet{side: fwSide},
		suppressed:  info.Suppressed,
		noRevocable: info.NoRevocable,
	}
	if n := len(a.freeIdx); n > 0 {
		f.idx = a.freeIdx[n-1]
		a.freeIdx = a.freeIdx[:n-1]
		a.fwByIdx[f.idx] = f
	} else {
		f.idx = len(a.fwByIdx)
		a.fwByIdx = append(a.fwByIdx, f)
	}
	f.leaf = a.tree.attach(role, &node{name: string(info.ID), path: string(info.ID), weight: info.Weight, fw: f})
	a.frameworks[info.ID] = f
	a.refresh(f)
	a.changed()
	return nil
}

// RemoveFramework removes a framework, rescinding its outstanding offers and
// releasing everything it runs.
func (a *Allocator) RemoveFramework(id protocol.FrameworkID) ([]Rescind, error) {
	f, err := a.framework(id)
	if err != nil {
		return nil, err
	}
	var out []Rescind
	for _, o := range f.offers.sorted() {
		out = append(out, a.rescind(o, "framework removed"))
	}
	for _, ag := range a.agentList {
		if u, ok := ag.usage[f]; ok {
			a.release(ag, f, u.res, u.ports)
		}
		ag.clearFilter(f.idx)
	}
	a.crvInstall(nil, f.shapes)
	f.suppressed, f.declared, f.shapes = true, true, nil
	a.setOptional(f, nil, 0)
	a.refresh(f)
	a.tree.detach(f.leaf)
	delete(a.frameworks, id)
	a.fwByIdx[f.idx] = nil
	a.freeIdx = append(a.freeIdx, f.idx)
	a.changed()
	return out, nil
}

// Suppress stops offers to a framework until Revive.
func (a *Allocator) Suppress(id protocol.FrameworkID) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	f.suppressed = true
	a.refresh(f)
	return nil
}

// Revive resumes offers to a framework and clears its decline filters.
func (a *Allocator) Revive(id protocol.FrameworkID) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	f.suppressed = false
	for _, ag := range a.agentList {
		ag.clearFilter(f.idx)
	}
	a.refresh(f)
	return nil
}

func (a *Allocator) framework(id protocol.FrameworkID) (*framework, error) {
	f, ok := a.frameworks[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFramework, id)
	}
	return f, nil
}

// refresh pushes a framework's demanding/open status into the tree counters
// and marks its leaf for re-evaluation.
func (a *Allocator) refresh(f *framework) {
	d, o := f.demanding(), f.open()
	var dd, do int
	if d != f.countedDemanding {
		dd = btoi(d) - btoi(f.countedDemanding)
	}
	if o != f.countedOpen {
		do = btoi(o) - btoi(f.countedOpen)
	}
	f.countedDemanding, f.countedOpen = d, o
	a.tree.adjustCounts(f.leaf, dd, do)
	a.tree.invalidate(f.leaf)
	a.crvRefresh(f)
	// Thresholds of Y depend only on which shapes have pending tasks.
	if a.shapes.update(f) {
		a.avail.demandChanged()
	}
	if dd != 0 || do != 0 {
		// Suppression leaves frameworks out of the static fill too.
		a.changed()
	}
}

// changed records that demand, capacity or the tree changed in a way that
// invalidates the static targets.
func (a *Allocator) changed() {
	a.static.stale = true
	a.collapsed.stale = true
	a.fair.stale = true
	a.fair.allStale = true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Now-free helpers used by tests and the simulator.

// Capacity returns the cluster's total scalar resources.
func (a *Allocator) Capacity() protocol.Resources { return a.reg.toResources(a.capacity) }

// Usage returns the scalars a framework runs (excluding outstanding offers).
func (a *Allocator) Usage(id protocol.FrameworkID) (protocol.Resources, error) {
	f, err := a.framework(id)
	if err != nil {
		return protocol.Resources{}, err
	}
	return a.reg.toResources(f.used), nil
}

// expiryOf returns the expiry for an offer made at now.
func (a *Allocator) expiryOf(now time.Time) time.Time {
	if a.cfg.OfferTimeout <= 0 {
		return time.Time{}
	}
	return now.Add(a.cfg.OfferTimeout)
}

// SetNoRevocable says whether a framework refuses revocable resources
// (FrameworkInfo.NoRevocable).
func (a *Allocator) SetNoRevocable(id protocol.FrameworkID, refuse bool) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	if f.noRevocable != refuse {
		f.noRevocable = refuse
		a.refresh(f)
	}
	return nil
}
