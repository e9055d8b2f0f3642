package offers

// admitClass is what the mix's constraints make of agents with ag's
// attributes: which shapes they admit, and the pressure on their GPUs
// (packAgent), once per weighing of the mix.
func (a *Allocator) admitClass(ag *agent, pa *packAgent) *admitClass {
	p := &a.pack
	if p.classVer != p.mixVer || p.classes == nil {
		p.classVer = p.mixVer
		p.classes = map[uint64]*admitClass{}
	}
	key := attrsOf(ag, pa)
	c := p.classes[key]
	if c == nil {
		c = &admitClass{admits: make([]bool, len(p.weights))}
		for i := range p.weights {
			m := &p.weights[i]
			c.admits[i] = a.admits(ag, m.shape)
			if c.admits[i] && m.reach > 0 {
				c.pressure += m.weight * p.gpuCap / m.reach
			}
			if c.admits[i] {
				c.cols = append(c.cols, p.cols[i])
			} else {
				c.wOut += p.cols[i].w
			}
		}
		p.classes[key] = c
	}
	return c
}

// admitClass is the mix's view of agents with the same attributes: the
// shapes they admit (admits, and their columns in cols), the weight of
// those they do not (wOut), and the pressure on their GPUs.
type admitClass struct {
	admits   []bool // read only: shared by the class's agents
	cols     []mixCol
	wOut     float64
	pressure float64
}

// packReach computes, once per weighing of the mix, the GPU capacity each
// mix shape's constraints admit, by class of attributes.
func (a *Allocator) packReach() {
	p := &a.pack
	if p.reachVer == p.mixVer {
		return
	}
	p.reachVer = p.mixVer
	p.gpuCap = 0
	for i := range p.weights {
		p.weights[i].reach = 0
	}
	type class struct {
		rep *agent
		gpu float64
	}
	var classes []class
	at := map[uint64]int{}
	for _, ag := range a.agentList {
		var g float64
		for _, j := range ag.gpuDims {
			g += float64(ag.total.at(j))
		}
		p.gpuCap += g
		key := attrsOf(ag, a.packAgentSlot(ag))
		k, ok := at[key]
		if !ok {
			k = len(classes)
			at[key] = k
			classes = append(classes, class{rep: ag})
		}
		classes[k].gpu += g
	}
	for _, c := range classes {
		for i := range p.weights {
			if m := &p.weights[i]; a.admits(c.rep, m.shape) {
				m.reach += c.gpu
			}
		}
	}
}
