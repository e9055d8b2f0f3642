package offers

// payHeadroom takes, for a guarantee's need, warned tasks and new victims
// from any agent until the headroom of unmet guarantees lets a round hand
// one task of v to f; it reports whether it got there.
func (p *planner) payHeadroom(n *need, f *framework, v vec) bool {
	for {
		req := p.required(f, v)
		short := shortfall(req, nil)
		if short.isZero() {
			return true
		}
		if p.payFromWarned(n, short) {
			continue
		}
		var best pick
		bestCover := 0.0
		for _, ag := range p.a.agentList {
			c, ok := p.pickOn(ag, n, short, true)
			if !ok {
				continue
			}
			var got vec
			for _, i := range c.tasks {
				got = got.add(p.tasks[i].res)
			}
			cv := coverage(got, short)
			if best.tasks == nil || cv > bestCover+shareEps || cv >= bestCover-shareEps && c.better(best) {
				best, bestCover = c, cv
			}
		}
		if best.tasks == nil || !p.take(n, best) {
			return false
		}
	}
}

// payFromWarned uses the warned tasks n may take that hold some of short,
// the preferred first; it reports whether it used any.
func (p *planner) payFromWarned(n *need, short vec) bool {
	used := false
	for _, ag := range p.warnedOn {
		var take []int
		for _, i := range p.warnedOnFor(ag, n, short) {
			if covers(p.tasks[i].res, short) {
				take = append(take, i)
				short = shortfall(short, p.tasks[i].res)
			}
		}
		p.useWarned(n, ag, take)
		used = used || len(take) > 0
		if short.isZero() {
			break
		}
	}
	return used
}
