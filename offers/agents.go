package offers

import (
	"fmt"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// AddAgent adds an agent with all of its resources free.
func (a *Allocator) AddAgent(info AgentInfo) error {
	if !protocol.ValidID(string(info.ID)) {
		return fmt.Errorf("%w: agent ID %q", ErrInvalid, info.ID)
	}
	if _, ok := a.agents[info.ID]; ok {
		return fmt.Errorf("%w: agent %s", ErrDuplicate, info.ID)
	}
	if err := info.Total.Validate(); err != nil {
		return err
	}
	ag := &agent{
		id:    info.ID,
		idx:   len(a.agentList),
		info:  info,
		total: a.reg.toVec(info.Total),
		usage: map[*framework]*usage{},

		offers: offerSet{side: agentSide},
	}
	ag.free = ag.total.clone()
	a.freeSeq++
	ag.ver, ag.serial = a.freeSeq, a.freeSeq
	ag.gpuDims = a.agentDevices(ag)
	ag.totalPorts = info.Total.Ranges[protocol.ResPorts].Normalize()
	ag.freePorts = ag.totalPorts
	a.agents[info.ID] = ag
	a.agentList = append(a.agentList, ag)
	a.capacity = a.capacity.add(a.withoutDevices(ag.total))
	a.capSeq++
	a.avail.agentAdded(ag)
	a.crvAgentAdded(ag)
	a.packTouched(ag)
	a.ver++
	a.changed()
	return nil
}

// RemoveAgent removes an agent: its offers are rescinded and what frameworks
// ran there is released from their usage.
func (a *Allocator) RemoveAgent(id protocol.AgentID) ([]Rescind, error) {
	ag, ok := a.agents[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownAgent, id)
	}
	var out []Rescind
	for _, o := range ag.offers.sorted() {
		out = append(out, a.rescind(o, "agent removed"))
	}
	for _, f := range a.frameworksOn(ag) {
		u := ag.usage[f]
		a.release(ag, f, u.res, u.ports)
	}
	if !ag.draining {
		a.avail.agentRemoved(ag)
	}
	a.crvAgentRemoved(ag)
	a.capacity = a.capacity.sub(a.withoutDevices(ag.total))
	a.capSeq++
	delete(a.agents, id)
	last := a.agentList[len(a.agentList)-1]
	a.agentList[ag.idx] = last
	last.idx = ag.idx
	a.agentList = a.agentList[:len(a.agentList)-1]
	a.avail.agentsMoved()
	a.packMoved()
	a.ver++
	a.changed()
	return out, nil
}

// AddUsage records resources a framework already runs on an agent, e.g. the
// tasks a new leader finds in the replicated state.
func (a *Allocator) AddUsage(fwID protocol.FrameworkID, agentID protocol.AgentID, res protocol.Resources) error {
	f, ag, err := a.pair(fwID, agentID)
	if err != nil {
		return err
	}
	if err := res.Validate(); err != nil {
		return err
	}
	v := a.toVec(res)
	ports := res.Ranges[protocol.ResPorts]
	if !ag.free.fits(v) || !ag.freePorts.ContainsAll(ports) {
		return fmt.Errorf("%w: agent %s cannot hold %s", ErrInsufficient, agentID, res)
	}
	a.take(ag, f, v, ports)
	a.countLaunch(f, v, 1)
	return nil
}

// Recover releases the resources of a task that ended.
func (a *Allocator) Recover(fwID protocol.FrameworkID, agentID protocol.AgentID, res protocol.Resources) error {
	f, ag, err := a.pair(fwID, agentID)
	if err != nil {
		return err
	}
	if err := res.Validate(); err != nil {
		return err
	}
	v, err := a.knownVec(res)
	if err != nil {
		return err
	}
	ports := res.Ranges[protocol.ResPorts]
	u := ag.usage[f]
	if u == nil || !u.res.fits(v) || !u.ports.ContainsAll(ports) {
		return fmt.Errorf("%w: framework %s does not hold %s on %s", ErrInvalid, fwID, res, agentID)
	}
	a.release(ag, f, v, ports)
	a.countLaunch(f, v, -1)
	return nil
}

func (a *Allocator) pair(fwID protocol.FrameworkID, agentID protocol.AgentID) (*framework, *agent, error) {
	f, err := a.framework(fwID)
	if err != nil {
		return nil, nil, err
	}
	ag, ok := a.agents[agentID]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrUnknownAgent, agentID)
	}
	return f, ag, nil
}

// take moves resources from an agent's free pool into a framework's usage.
func (a *Allocator) take(ag *agent, f *framework, v vec, ports protocol.Ranges) {
	a.addFree(ag, v, -1)
	if len(ports) > 0 {
		ag.freePorts = ag.freePorts.Minus(ports)
	}
	u := ag.usage[f]
	if u == nil {
		u = &usage{}
		ag.usage[f] = u
	}
	u.res = u.res.add(v)
	if len(ports) > 0 {
		u.ports = u.ports.Union(ports)
	}
	f.used = f.used.add(v)
	a.addAlloc(f, v, 1)
	a.tree.invalidate(f.leaf)
}

// release moves resources from a framework's usage back to the free pool.
// v is copied first: callers may pass the usage vector itself, which the
// in-place arithmetic below changes.
func (a *Allocator) release(ag *agent, f *framework, v vec, ports protocol.Ranges) {
	v = v.clone()
	ports = slices.Clone(ports)
	a.addFree(ag, v, 1)
	if len(ports) > 0 {
		ag.freePorts = ag.freePorts.Union(ports)
	}
	if u := ag.usage[f]; u != nil {
		u.res = u.res.sub(v)
		if len(ports) > 0 {
			u.ports = u.ports.Minus(ports)
		}
		if u.res.isZero() && len(u.ports) == 0 {
			delete(ag.usage, f)
		}
	}
	f.used = f.used.sub(v)
	a.addAlloc(f, v, -1)
	a.tree.invalidate(f.leaf)
	ag.liftOutgrownFilters()
}

// addFree adds sign*v to an agent's free vector, keeping availability
// counts in step component by component.
func (a *Allocator) addFree(ag *agent, v vec, sign int64) {
	a.freeSeq++
	ag.ver = a.freeSeq
	a.packTouched(ag)
	ag.free = ag.free.grow(len(v))
	a.avail.grow(len(v))
	for j, x := range v {
		if x == 0 {
			continue
		}
		ag.free[j] += sign * x
		if !ag.draining {
			a.avail.set(ag.idx, j, ag.free[j])
		}
		for _, c := range ag.classes {
			c.free = c.free.grow(j + 1)
			c.free[j] += sign * x
		}
	}
}

// countLaunch adjusts the running-task count of the shape matching v (used
// for static targets and fair shares) by delta. A task counts under its
// declared shape's key when there is one; an ending task whose shape is no
// longer declared is found by its resources, so that no count outlives
// its tasks; and a task launched without a declared shape counts under a
// key of its own.
func (a *Allocator) countLaunch(f *framework, v vec, delta int64) {
	v = a.withoutDevices(v)
	key := ""
	if s := f.shapeFor(v); s != nil && (delta > 0 || f.launched[s.key] > 0) {
		key = s.key
	}
	if key == "" {
		for k, r := range f.launchRes {
			if vecEqual(r, v) && (key == "" || k < key) {
				key = k
			}
		}
	}
	if key == "" {
		if delta < 0 {
			return
		}
		key = "launched|" + a.reg.toResources(v).String()
	}
	a.pack.count(f, key, delta)
	f.launched[key] += delta
	if f.launched[key] <= 0 {
		delete(f.launched, key)
		delete(f.launchRes, key)
	} else if f.launchRes[key] == nil {
		f.launchRes[key] = v.clone()
	}
	a.static.stale = true
	a.fair.stale = true
	a.fair.allStale = true
	a.crvRefresh(f)
}

// frameworksOn returns the frameworks with usage on ag in index order.
func (a *Allocator) frameworksOn(ag *agent) []*framework {
	out := make([]*framework, 0, len(ag.usage))
	for _, f := range a.fwByIdx {
		if f != nil && ag.usage[f] != nil {
			out = append(out, f)
		}
	}
	return out
}

// toVec converts scalars to a vector, registering resource names it has not
// seen. A new name lengthens every vector, so it invalidates every cached
// evaluation (a node's vector and its whole-task states have one entry per name).
func (a *Allocator) toVec(res protocol.Resources) vec {
	n := len(a.reg.names)
	v := a.reg.toVec(res)
	if len(a.reg.names) != n {
		a.ver++
	}
	return v
}

// knownVec converts resources that may only name registered scalars (what
// is being returned must have been handed out), without registering names.
func (a *Allocator) knownVec(res protocol.Resources) (vec, error) {
	var v vec
	for name, amt := range res.Scalars {
		j, ok := a.reg.index[name]
		if !ok {
			if amt == 0 {
				continue
			}
			return nil, fmt.Errorf("%w: resource %q was never offered", ErrInvalid, name)
		}
		v = v.grow(j + 1)
		v[j] = amt
	}
	return v, nil
}
