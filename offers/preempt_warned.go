package offers

// placeOnWarned uses tasks warned by an earlier plan that n may take (the
// rules for new victims but protection, which was checked when they were
// chosen), the fewest that make room.
func (p *planner) placeOnWarned(n *need, f *framework, s *shape, req vec) bool {
	for _, ag := range p.warnedOn {
		if !p.usable(ag, f, s) {
			continue
		}
		need := p.shortOn(ag, s, req)
		if need.isZero() {
			continue
		}
		short := need
		var chosen []int
		for _, i := range p.warnedOnFor(ag, n, need) {
			if !covers(p.tasks[i].res, short) {
				continue
			}
			chosen = append(chosen, i)
			short = shortfall(short, p.tasks[i].res)
			if short.isZero() {
				break
			}
		}
		if !short.isZero() {
			continue
		}
		chosen = p.prune(chosen, need)
		if !p.admits(f, s.res, chosen) {
			continue
		}
		p.useWarned(n, ag, chosen)
		p.setFree(ag, p.free(ag).clone().sub(s.res))
		p.launch(f, s.res)
		if n.guarantee && len(chosen) > 0 {
			p.hold(ag, n.node, s.res)
		}
		return true
	}
	return false
}

// warnedOnFor lists the warned tasks on ag, not used yet, that n may take
// and that hold some of short, the preferred first.
func (p *planner) warnedOnFor(ag *agent, n *need, short vec) []int {
	if !p.hasWarned[ag.idx] {
		return nil
	}
	var out []int
	for _, i := range p.onAgent(ag) {
		t := &p.tasks[i]
		if !t.Warned || t.used || t.NonPreemptible || !covers(t.res, short) {
			continue
		}
		if _, ok := p.eligible(t, n); ok {
			out = append(out, i)
		}
	}
	return out
}

// useWarned keeps the warned tasks on ag for n: their room is the plan's.
func (p *planner) useWarned(n *need, ag *agent, warned []int) {
	if len(warned) == 0 {
		return
	}
	freed := p.free(ag).clone()
	for _, i := range warned {
		t := &p.tasks[i]
		t.used = true
		if p.usedFor == nil {
			p.usedFor = map[int]string{}
		}
		p.usedFor[i] = n.For
		freed = freed.add(t.res)
		p.gone(t)
	}
	p.setFree(ag, freed)
}
