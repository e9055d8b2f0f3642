package placement

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// Spec is a set of tasks to place together.
type Spec struct {
	// Tasks are placed as they are, each on one agent; their own hard
	// constraints apply.
	Tasks []protocol.TaskInfo
	// Ports is how many ports each task gets from its agent's offers, on
	// top of any its resources name.
	Ports int
	// Constraints apply to the whole set: group operators (unique, same,
	// max_per) over the tasks' agents, and per-task operators to every
	// task. Soft ones are ignored.
	Constraints []protocol.Constraint
}

// Plan says where each task goes.
type Plan struct {
	// Tasks are the spec's tasks in order, with AgentID set and the ports
	// they were given added to their resources.
	Tasks []protocol.TaskInfo
	// Agents lists the agents used, by agent ID, with the tasks placed
	// there and every offer held on that agent (accepting them all
	// returns the unused part to the agent).
	Agents []AgentPlan
}

// AgentPlan is the part of a placement on one agent: one accept.
type AgentPlan struct {
	AgentID  protocol.AgentID
	OfferIDs []protocol.OfferID
	Tasks    []protocol.TaskInfo
}

// placementBudget bounds the search steps of one Place call.
const placementBudget = 20000

// Place finds where every task of spec can run on the offers: each task
// on one agent whose offers hold its resources (tasks on the same agent
// sharing them) and whose attributes pass its hard constraints, with the
// spec's group constraints satisfied over all tasks. It returns false
// when no placement exists, or none was found within a bounded search.
//
// The search is a depth-first one over agents: tasks with the fewest
// possible agents go first; agents holding fewer of the group's tasks on
// the same attribute value are tried first; agents that are
// interchangeable for the remaining tasks are tried once. With `same`
// constraints each group of agents sharing the values is searched on its
// own, largest first.
func Place(offers []protocol.Offer, spec Spec) (Plan, bool) {
	if len(spec.Tasks) == 0 {
		return Plan{}, true
	}
	slots := slotsOf(offers)
	group := GroupConstraints(spec.Constraints)
	common := TaskConstraints(spec.Constraints)
	for _, part := range partitions(slots, group) {
		s := newSearch(part, spec, group, common)
		if s.dfs(0) {
			return s.result(spec), true
		}
	}
	return Plan{}, false
}

// slot is one agent's offers, summed.
type slot struct {
	id     protocol.AgentID
	offers []protocol.OfferID
	attrs  protocol.Attributes
	total  protocol.Resources
}

func slotsOf(offers []protocol.Offer) []*slot {
	index := map[protocol.AgentID]*slot{}
	var out []*slot
	for _, o := range offers {
		s, ok := index[o.AgentID]
		if !ok {
			s = &slot{id: o.AgentID, attrs: o.Attributes}
			index[o.AgentID] = s
			out = append(out, s)
		}
		s.offers = append(s.offers, o.ID)
		s.total.AddInPlace(o.Resources)
	}
	slices.SortFunc(out, func(a, b *slot) int { return cmp.Compare(a.id, b.id) })
	return out
}

// partitions splits the agents by the values of the `same` constraints'
// attributes (agents without one cannot take part), largest group first;
// without `same` constraints all agents form one group.
func partitions(slots []*slot, group []protocol.Constraint) [][]*slot {
	var same []string
	for _, c := range group {
		if c.Op == protocol.OpSame {
			same = append(same, c.Attribute)
		}
	}
	if len(same) == 0 {
		return [][]*slot{slots}
	}
	byKey := map[string][]*slot{}
	var keys []string
	for _, s := range slots {
		var parts []string
		ok := true
		for _, a := range same {
			v, has := s.attrs[a]
			if !has {
				ok = false
				break
			}
			parts = append(parts, v.String())
		}
		if !ok {
			continue
		}
		k := strings.Join(parts, "\x00")
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], s)
	}
	slices.SortStableFunc(keys, func(a, b string) int {
		if c := cmp.Compare(len(byKey[b]), len(byKey[a])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	out := make([][]*slot, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// search is one depth-first placement search over a group of agents.
type search struct {
	slots  []*slot
	tasks  []protocol.TaskInfo // in search order
	orig   []int               // orig[k]: index in the spec of tasks[k]
	ports  int
	group  []protocol.Constraint
	spread []protocol.Constraint // unique and max_per
	feas   [][]bool              // feas[k][j]: task k may run on slot j alone
	free   []protocol.Resources
	assign []int
	given  []protocol.Ranges // ports given to each task
	placed []protocol.Attributes
	budget int
}

func newSearch(slots []*slot, spec Spec, group, common []protocol.Constraint) *search {
	n := len(spec.Tasks)
	s := &search{slots: slots, ports: spec.Ports, group: group, budget: placementBudget,
		assign: make([]int, n), given: make([]protocol.Ranges, n), placed: make([]protocol.Attributes, 0, n)}
	for _, c := range group {
		if c.Op == protocol.OpUnique || c.Op == protocol.OpMaxPer {
			s.spread = append(s.spread, c)
		}
	}
	feas := make([][]bool, n)
	count := make([]int, n)
	for i, t := range spec.Tasks {
		feas[i] = make([]bool, len(slots))
		for j, sl := range slots {
			ok := s.fits(sl.total, t) && GroupAllows(group, nil, sl.attrs)
			if ok {
				ok = protocol.HoldHard(t.Constraints, sl.attrs)
			}
			if ok {
				ok = protocol.HoldHard(common, sl.attrs)
			}
			feas[i][j] = ok
			if ok {
				count[i]++
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(count[a], count[b]); c != 0 {
			return c
		}
		return cmp.Compare(size(spec.Tasks[b].Resources), size(spec.Tasks[a].Resources))
	})
	for _, i := range order {
		s.tasks = append(s.tasks, spec.Tasks[i])
		s.orig = append(s.orig, i)
		s.feas = append(s.feas, feas[i])
	}
	s.free = make([]protocol.Resources, len(slots))
	for j, sl := range slots {
		s.free[j] = sl.total.Clone()
	}
	return s
}

// size orders tasks, largest first, by the sum of their scalars.
func size(r protocol.Resources) int64 {
	var n int64
	for _, v := range r.Scalars {
		n += v
	}
	return n
}

// fits reports whether task t fits in free, ports included.
func (s *search) fits(free protocol.Resources, t protocol.TaskInfo) bool {
	if !free.Contains(t.Resources) {
		return false
	}
	if s.ports == 0 {
		return true
	}
	left := free.Ranges[protocol.ResPorts].Minus(t.Resources.Ranges[protocol.ResPorts])
	return left.Count() >= uint64(s.ports)
}

func (s *search) dfs(k int) bool {
	if k == len(s.tasks) {
		return true
	}
	if s.budget <= 0 {
		return false
	}
	s.budget--
	tried := map[string]bool{}
	for _, j := range s.candidates(k) {
		sig := s.signature(k, j)
		if tried[sig] {
			continue
		}
		tried[sig] = true
		s.place(k, j)
		if s.dfs(k + 1) {
			return true
		}
		s.unplace(k, j)
	}
	return false
}

// candidates returns the agents task k may go to now, best first.
func (s *search) candidates(k int) []int {
	t := s.tasks[k]
	var out []int
	load := map[int]int{}
	for j, sl := range s.slots {
		if !s.feas[k][j] || !s.fits(s.free[j], t) || !GroupAllows(s.group, s.placed, sl.attrs) {
			continue
		}
		out = append(out, j)
		load[j] = s.spreadLoad(sl.attrs)
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(load[a], load[b]) })
	return out
}

// spreadLoad counts the tasks placed so far that share an attribute value
// of a spreading constraint with attrs.
func (s *search) spreadLoad(attrs protocol.Attributes) int {
	n := 0
	for _, c := range s.spread {
		v, ok := attrs[c.Attribute]
		if !ok {
			continue
		}
		for _, p := range s.placed {
			if pv, ok := p[c.Attribute]; ok && pv.String() == v.String() {
				n++
			}
		}
	}
	return n
}

// signature identifies what slot j looks like to tasks k and later: its
// group attribute values, its free resources and which of them it may
// host. Agents with equal signatures are interchangeable.
func (s *search) signature(k, j int) string {
	var b strings.Builder
	for _, c := range s.group {
		if v, ok := s.slots[j].attrs[c.Attribute]; ok {
			b.WriteString(v.String())
		}
		b.WriteByte(0)
	}
	b.WriteString(s.free[j].String())
	b.WriteByte(0)
	for i := k; i < len(s.tasks); i++ {
		b.WriteString(strconv.FormatBool(s.feas[i][j]))
	}
	return b.String()
}

func (s *search) place(k, j int) {
	t := s.tasks[k]
	s.free[j].SubInPlace(t.Resources)
	if s.ports > 0 {
		got, _ := s.free[j].Ranges[protocol.ResPorts].Take(uint64(s.ports))
		s.given[k] = got
		s.free[j].SubInPlace(protocol.Resources{Ranges: map[string]protocol.Ranges{protocol.ResPorts: got}})
	}
	s.assign[k] = j
	s.placed = append(s.placed, s.slots[j].attrs)
}

func (s *search) unplace(k, j int) {
	s.free[j].AddInPlace(s.tasks[k].Resources)
	if s.given[k] != nil {
		s.free[j].AddInPlace(protocol.Resources{Ranges: map[string]protocol.Ranges{protocol.ResPorts: s.given[k]}})
		s.given[k] = nil
	}
	s.placed = s.placed[:len(s.placed)-1]
}

// result builds the placement of a successful search.
func (s *search) result(spec Spec) Plan {
	p := Plan{Tasks: make([]protocol.TaskInfo, len(spec.Tasks))}
	perSlot := map[int][]int{}
	for k, t := range s.tasks {
		j := s.assign[k]
		t.AgentID = s.slots[j].id
		t.Resources = WithPorts(t.Resources, s.given[k])
		p.Tasks[s.orig[k]] = t
		perSlot[j] = append(perSlot[j], s.orig[k])
	}
	for j, sl := range s.slots {
		idx := perSlot[j]
		if len(idx) == 0 {
			continue
		}
		slices.Sort(idx)
		ap := AgentPlan{AgentID: sl.id, OfferIDs: slices.Clone(sl.offers)}
		for _, i := range idx {
			ap.Tasks = append(ap.Tasks, p.Tasks[i])
		}
		p.Agents = append(p.Agents, ap)
	}
	return p
}
