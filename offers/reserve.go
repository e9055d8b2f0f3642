package offers

// Room for large tasks. While a framework has tasks pending that ask for
// several whole GPU devices, idle agents that could run one are kept out
// of smaller tasks' offers in a round: one agent for each such task
// pending, chosen in the round's turn order, and never more than half of
// the idle agents with devices, so that smaller work always has room. An
// agent the large task's framework filters is not kept for it.

// largeDevices is how many whole devices make a task large.
const largeDevices = 2

// large reports whether s asks for several whole devices.
func (s *shape) large() bool { return s.gpu.whole >= largeDevices }

// reserveLarge marks, for this round, the agents kept for large tasks
// (agent.idx in reserved); none when no large task is pending.
func (a *Allocator) reserveLarge(order func(i int) *agent, n int) []bool {
	type want struct {
		f *framework
		s *shape
		n int64
	}
	var wants []want
	for _, f := range a.fwByIdx {
		if f == nil || !f.demanding() || f.suppressed {
			continue
		}
		for _, s := range f.shapes {
			if s.large() && s.pending() > 0 {
				wants = append(wants, want{f, s, s.pending()})
			}
		}
	}
	if len(wants) == 0 {
		return nil
	}
	idle := 0
	for _, ag := range a.agentList {
		if a.idleDevices(ag) {
			idle++
		}
	}
	limit := idle / 2
	if limit == 0 {
		return nil
	}
	reserved := make([]bool, len(a.agentList))
	kept := 0
	for i := 0; i < n && kept < limit; i++ {
		ag := order(i)
		if !a.idleDevices(ag) {
			continue
		}
		for k := range wants {
			w := &wants[k]
			if w.n == 0 || ag.isFiltered(w.f.idx) || !ag.free.fits(w.s.res) ||
				!devicesFit(ag.free, ag.gpuDims, w.s.gpu) || !a.satisfiesOn(ag, w.s) {
				continue
			}
			w.n--
			reserved[ag.idx] = true
			kept++
			break
		}
	}
	return reserved
}

// idleDevices reports whether all of ag's devices are free and it is
// offered to anyone.
func (a *Allocator) idleDevices(ag *agent) bool {
	if len(ag.gpuDims) == 0 || ag.draining {
		return false
	}
	for _, j := range ag.gpuDims {
		if ag.free.at(j) < ag.total.at(j) {
			return false
		}
	}
	return true
}
