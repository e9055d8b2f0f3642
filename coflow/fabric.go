package coflow

// fabric indexes the unfinished coflows by port side: which coflows still
// have unfinished flows leaving (egress) or entering (ingress) each port.
// Its set sizes are the port contentions k_p of policy D; the sets give
// policy C's and the thin class's contention c.
//
// The sets are small unordered slices (a port rarely carries more than a few
// dozen coflows): counting and iterating them is what every recomputation
// does, and slices do it several times faster than maps.
type fabric struct {
	egress, ingress [][]*coflowState
	stamp           uint64 // last stamp handed out for coflowState.mark
}

// fresh returns a mark stamp no coflow carries yet.
func (fb *fabric) fresh() uint64 {
	fb.stamp++
	return fb.stamp
}

func newFabric(ports int) *fabric {
	return &fabric{
		egress:  make([][]*coflowState, ports),
		ingress: make([][]*coflowState, ports),
	}
}

func join(sets [][]*coflowState, p Port, c *coflowState) {
	sets[p] = append(sets[p], c)
}

// leave removes c from port p's set; order inside a set does not matter.
func leave(sets [][]*coflowState, p Port, c *coflowState) {
	set := sets[p]
	for i, o := range set {
		if o == c {
			last := len(set) - 1
			set[i] = set[last]
			set[last] = nil
			sets[p] = set[:last]
			return
		}
	}
}

// add indexes a new coflow at all its ports.
func (fb *fabric) add(c *coflowState) {
	for _, p := range c.senders {
		join(fb.egress, p, c)
	}
	for _, p := range c.receivers {
		join(fb.ingress, p, c)
	}
}

// finishFlow updates the per-port counts after f finished and reports
// whether c left a port side (so contention changed there).
func (fb *fabric) finishFlow(c *coflowState, f *flowState) bool {
	freed := false
	if c.sendLeft[f.sendIdx]--; c.sendLeft[f.sendIdx] == 0 {
		leave(fb.egress, f.link.Src, c)
		freed = true
	}
	if c.recvLeft[f.recvIdx]--; c.recvLeft[f.recvIdx] == 0 {
		leave(fb.ingress, f.link.Dst, c)
		freed = true
	}
	return freed
}

// remove takes a withdrawn coflow off every port.
func (fb *fabric) remove(c *coflowState) {
	for i, p := range c.senders {
		if c.sendLeft[i] > 0 {
			leave(fb.egress, p, c)
		}
	}
	for i, p := range c.receivers {
		if c.recvLeft[i] > 0 {
			leave(fb.ingress, p, c)
		}
	}
}

// contention counts the other coflows that share at least one active port
// side with c. Only those in scope count (all when scope is nil).
func (fb *fabric) contention(c *coflowState, scope func(*coflowState) bool) int {
	stamp := fb.fresh()
	n := 0
	count := func(set []*coflowState) {
		for _, o := range set {
			if o == c || o.mark == stamp || (scope != nil && !scope(o)) {
				continue
			}
			o.mark = stamp
			n++
		}
	}
	for i, p := range c.senders {
		if c.sendLeft[i] > 0 {
			count(fb.egress[p])
		}
	}
	for i, p := range c.receivers {
		if c.recvLeft[i] > 0 {
			count(fb.ingress[p])
		}
	}
	return n
}
