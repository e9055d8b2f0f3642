package offers

import "slices"

// shapeIndex counts, per distinct task shape, the frameworks with pending
// tasks of that shape. It answers "can this agent fit any pending task at
// all?" without walking the tree, and gives availability its thresholds.
type shapeIndex struct {
	byKey map[string]*shapeRef
	list  []*shapeRef // insertion order, for deterministic scans
}

type shapeRef struct {
	key   string
	res   vec
	ports uint64
	gpu   gpuNeed
	// cls are the classes of its hard constraints (the key names them),
	// nil when not every one has its class.
	cls []*crvClass
	n   int
}

// update replaces the keys framework f contributes; it reports whether the
// set of distinct pending shapes changed.
func (si *shapeIndex) update(f *framework) bool {
	if si.byKey == nil {
		si.byKey = map[string]*shapeRef{}
	}
	var next []string
	if f.demanding() {
		for _, s := range f.shapes {
			if s.pending() > 0 && !slices.Contains(next, s.key) {
				next = append(next, s.key)
			}
		}
	}
	changed := false
	for _, k := range f.contrib {
		if slices.Contains(next, k) {
			continue
		}
		r := si.byKey[k]
		r.n--
		if r.n == 0 {
			delete(si.byKey, k)
			si.list = slices.DeleteFunc(si.list, func(x *shapeRef) bool { return x == r })
			changed = true
		}
	}
	for _, k := range next {
		if slices.Contains(f.contrib, k) {
			continue
		}
		r := si.byKey[k]
		if r == nil {
			s := f.shapeByKey(k)
			r = &shapeRef{key: k, res: s.res, ports: s.ports, gpu: s.gpu}
			if len(s.cls) == len(s.hard) {
				r.cls = slices.Clone(s.cls)
			}
			si.byKey[k] = r
			si.list = append(si.list, r)
			changed = true
		}
		r.n++
	}
	f.contrib = next
	return changed
}

// anyFits reports whether some pending shape fits the agent's free pool
// and its attributes.
func (si *shapeIndex) anyFits(ag *agent) bool {
	for _, r := range si.list {
		if ag.free.fits(r.res) && (r.ports == 0 || ag.freePorts.Count() >= r.ports) && devicesFit(ag.free, ag.gpuDims, r.gpu) &&
			inClasses(ag, r.cls) {
			return true
		}
	}
	return false
}
