package pack

import (
	"math"
	"time"
)

// FGD is Fragmentation Gradient Descent (Weng et al., ATC 2023): it places a
// pod on the node, and for a sharing pod the device, that grows the node's
// fragmentation the least, fragmentation being measured against the
// workload's mix of pod shapes (see targetWorkload.fragmentation). Ties go to
// the earlier node and device.
func FGD() Policy {
	return Policy{Name: "fgd", New: func(nodes []Node, workload []Pod, _ uint64) (Placer, error) {
		return newFGD(nodes, workload), nil
	}}
}

type fgd struct {
	clusterPlacer
	target *targetWorkload
	frag   *fragMemo
	model  []int // each node's interned GPU model

	// version counts each node's changes; a cached value is good while its
	// version is the node's (versions start at 1, so zero values are stale).
	version []uint32
	before  []cachedFrag   // per node: its fragmentation now
	growth  []cachedGrowth // per node and shape: the best placement's growth
	devices []int          // scratch
}

type cachedFrag struct {
	version uint32
	frag    float64
}

type cachedGrowth struct {
	version uint32
	device  int32 // the device a sharing pod takes, -1 for the others
	growth  float64
}

func newFGD(nodes []Node, workload []Pod) *fgd {
	target := newTargetWorkload(nodes, workload)
	f := &fgd{
		clusterPlacer: clusterPlacer{NewCluster(nodes)},
		target:        target,
		frag:          newFragMemo(target),
		model:         make([]int, len(nodes)),
		version:       make([]uint32, len(nodes)),
		before:        make([]cachedFrag, len(nodes)),
		growth:        make([]cachedGrowth, len(nodes)*len(target.shapes)),
	}
	for n, node := range nodes {
		f.model[n] = target.models[node.Model]
		f.version[n] = 1
	}
	return f
}

func (f *fgd) Place(_ time.Duration, p *Pod) (int, bool) {
	shape, known := f.target.index[p.Shape()]
	best, bestDevice, bestGrowth := -1, -1, math.Inf(1)
	for n := range f.cluster.Nodes() {
		if !f.cluster.Fits(n, p) {
			continue
		}
		var device int
		var growth float64
		if known {
			device, growth = f.cachedGrowth(n, shape, p)
		} else {
			device, growth = f.measureGrowth(n, p)
		}
		if growth < bestGrowth {
			best, bestDevice, bestGrowth = n, device, growth
		}
	}
	if best < 0 {
		return 0, false
	}
	var devices []int // nil: the first wholly free devices, all alike to FGD
	if bestDevice >= 0 {
		devices = []int{bestDevice}
	}
	f.version[best]++
	return f.placeOn(best, p, devices)
}

func (f *fgd) Remove(now time.Duration, p *Pod) {
	if pl, ok := f.cluster.Placement(p.ID); ok {
		f.version[pl.Node]++
	}
	f.clusterPlacer.Remove(now, p)
}

// cachedGrowth is measureGrowth for a pod of a known shape, cached until the
// node changes.
func (f *fgd) cachedGrowth(n, shape int, p *Pod) (int, float64) {
	c := &f.growth[n*len(f.target.shapes)+shape]
	if c.version != f.version[n] {
		device, growth := f.measureGrowth(n, p)
		*c = cachedGrowth{version: f.version[n], device: int32(device), growth: growth}
	}
	return int(c.device), c.growth
}

// measureGrowth returns how much placing p on node n (where it fits) would
// grow the node's fragmentation, and for a sharing pod the device that grows
// it the least (-1 for other pods).
func (f *fgd) measureGrowth(n int, p *Pod) (int, float64) {
	free := &f.cluster.free[n]
	cpu, mem := free.CPUMilli-p.CPUMilli, free.MemoryMiB-p.MemoryMiB
	before := f.fragNow(n)
	if !p.Sharing() {
		f.devices = f.devices[:0]
		for d, milli := range free.Devices {
			if len(f.devices) == p.NumGPU {
				break
			}
			if milli == DeviceMilli {
				f.devices = append(f.devices, d)
			}
		}
		return -1, f.frag.measure(f.model[n], cpu, mem, free.Devices, f.devices, p.GPUMilli) - before
	}
	best, bestGrowth := -1, math.Inf(1)
	for d, milli := range free.Devices {
		if milli < p.GPUMilli || sameAsEarlier(free.Devices, d) {
			continue // devices with equal free milli leave equal states
		}
		f.devices = append(f.devices[:0], d)
		if growth := f.frag.measure(f.model[n], cpu, mem, free.Devices, f.devices, p.GPUMilli) - before; growth < bestGrowth {
			best, bestGrowth = d, growth
		}
	}
	return best, bestGrowth
}

// sameAsEarlier reports whether a device before d has d's free milli-GPU.
func sameAsEarlier(free []int64, d int) bool {
	for _, milli := range free[:d] {
		if milli == free[d] {
			return true
		}
	}
	return false
}

// fragNow is node n's fragmentation in its current state, cached until it
// changes.
func (f *fgd) fragNow(n int) float64 {
	c := &f.before[n]
	if c.version != f.version[n] {
		free := &f.cluster.free[n]
		*c = cachedFrag{version: f.version[n], frag: f.frag.measure(f.model[n], free.CPUMilli, free.MemoryMiB, free.Devices, nil, 0)}
	}
	return c.frag
}
