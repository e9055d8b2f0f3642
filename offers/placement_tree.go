package offers

// When one task of one shape is pending (the common case: a task
// arrives), packOrder needs only the best state for that shape. Reading
// every state for it costs a pass over about as many states as agents per
// arrival, though a placement changes two states at most. So each shape
// keeps a tournament over the state ids (packTree), which the states'
// change log brings up to date one leaf at a time.

// packTree is one shape's tournament: win[n+sid] is state sid if the
// shape fits there (else -1), and each inner node the better of its two
// children by packLess, ties going to the state whose first agent comes
// first. It holds for the mix version mixVer and the states' epoch, as of
// position at of their change log.
type packTree struct {
	win []int32
	n   int
	// seen marks the nodes brought up to date in sync number stamp.
	seen   []uint32
	stamp  uint32
	mixVer uint64
	epoch  uint64
	at     uint64
}

// logChange notes that state id's members (or the state itself) changed.
func (st *packStates) logChange(id int32) {
	if len(st.log) > 4*len(st.members)+64 {
		// Trees behind the dropped entries are built again.
		st.logBase += uint64(len(st.log))
		st.log = st.log[:0]
	}
	st.log = append(st.log, id)
}

// packBest is the state where a task of s (shape id id) adds the least
// fragmentation, as packOrder's pass over every state finds it, or -1.
func (a *Allocator) packBest(id int, s *shape) int32 {
	p, st := &a.pack, &a.pack.states
	for len(st.trees) <= id {
		st.trees = append(st.trees, packTree{})
	}
	tr := &st.trees[id]
	col := st.column(id, len(a.agentList))
	leaf := func(sid int32) int32 {
		if len(st.members[sid]) == 0 || st.drains[sid] {
			return -1
		}
		c := &col[sid]
		if c.gen != st.gen[sid] || c.mixVer != p.mixVer {
			c.sc, c.gen, c.mixVer = a.scoreOn(a.agentList[st.members[sid][0]], s), st.gen[sid], p.mixVer
		}
		if !c.sc.ok {
			return -1
		}
		return sid
	}
	better := func(x, y int32) int32 {
		switch {
		case x < 0:
			return y
		case y < 0:
			return x
		case packLess(&col[y].sc, &col[x].sc, int(st.members[y][0]), int(st.members[x][0])):
			return y
		}
		return x
	}
	end := st.logBase + uint64(len(st.log))
	if tr.mixVer != p.mixVer || tr.epoch != st.epoch || tr.at < st.logBase || len(st.members) > tr.n || tr.win == nil {
		n := 1
		for n < len(st.members) {
			n *= 2
		}
		tr.n, tr.win, tr.seen, tr.stamp = n, reuse(&tr.win, 2*n), reuse(&tr.seen, 2*n), 0
		for k := range tr.win {
			tr.win[k] = -1
		}
		for sid := range st.members {
			tr.win[n+sid] = leaf(int32(sid))
		}
		for k := n - 1; k >= 1; k-- {
			tr.win[k] = better(tr.win[2*k], tr.win[2*k+1])
		}
	} else {
		// Every changed leaf first, then their ancestors a level at a
		// time: a node is compared only once both its children are
		// current (a stale winner may be a state with no agents left).
		nodes := st.treeNodes[:0]
		if tr.stamp++; tr.stamp == 0 {
			clear(tr.seen) // wrapped: no mark may pass for the new stamp
			tr.stamp = 1
		}
		for _, sid := range st.log[tr.at-st.logBase:] {
			if k := int32(tr.n) + sid; tr.seen[k] != tr.stamp {
				tr.seen[k] = tr.stamp
				tr.win[k] = leaf(sid)
				nodes = append(nodes, k)
			}
		}
		for len(nodes) > 0 && nodes[0] > 1 {
			up := nodes[:0]
			for _, k := range nodes {
				if k /= 2; tr.seen[k] != tr.stamp {
					tr.seen[k] = tr.stamp
					up = append(up, k)
				}
			}
			for _, k := range up {
				tr.win[k] = better(tr.win[2*k], tr.win[2*k+1])
			}
			nodes = up
		}
		st.treeNodes = nodes
	}
	tr.mixVer, tr.epoch, tr.at = p.mixVer, st.epoch, end
	return tr.win[1]
}
