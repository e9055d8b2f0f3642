package pack

import (
	"slices"
)

// targetWorkload is FGD's model of what will arrive: the workload's distinct
// pod shapes, each weighted by its popularity (its share of the workload's
// pods), indexed so that a node's fragmentation is cheap to measure.
type targetWorkload struct {
	shapes []targetShape
	index  map[Shape]int
	// models interns the nodes' GPU models; allowed[m] lists the shapes that
	// may run on model m, barred[m] is the total popularity of the others.
	models  map[string]int
	allowed [][]int
	barred  []float64
}

type targetShape struct {
	cpu, mem   int64
	numGPU     int
	milli      int64
	sharing    bool
	popularity float64
}

// newTargetWorkload counts the shapes of workload and relates them to the
// GPU models of nodes.
func newTargetWorkload(nodes []Node, workload []Pod) *targetWorkload {
	w := &targetWorkload{index: map[Shape]int{}, models: map[string]int{}}
	var modelOf []string
	for _, n := range nodes {
		if _, ok := w.models[n.Model]; !ok {
			w.models[n.Model] = len(modelOf)
			modelOf = append(modelOf, n.Model)
		}
	}
	var allowedModels [][]string
	for i := range workload {
		p := &workload[i]
		sh := p.Shape()
		s, ok := w.index[sh]
		if !ok {
			s = len(w.shapes)
			w.index[sh] = s
			w.shapes = append(w.shapes, targetShape{cpu: p.CPUMilli, mem: p.MemoryMiB,
				numGPU: p.NumGPU, milli: p.GPUMilli, sharing: p.Sharing()})
			allowedModels = append(allowedModels, p.Models)
		}
		w.shapes[s].popularity++
	}
	for s := range w.shapes {
		w.shapes[s].popularity /= float64(len(workload))
	}
	w.allowed = make([][]int, len(modelOf))
	w.barred = make([]float64, len(modelOf))
	for m, model := range modelOf {
		for s, models := range allowedModels {
			if len(models) == 0 || slices.Contains(models, model) {
				w.allowed[m] = append(w.allowed[m], s)
			} else {
				w.barred[m] += w.shapes[s].popularity
			}
		}
	}
	return w
}

// fragmentation is F_n of the paper for a node of GPU model m with this much
// CPU and memory free and devices with these free milli-GPU, sorted
// ascending: the expected GPU milli that a pod drawn from the target workload
// could not use. For one shape, that is every free milli when the shape
// cannot fit the node at all (CPU, memory, model or devices); otherwise the
// free milli of the devices that cannot serve it (below its share for a
// sharing shape, not wholly free for whole GPUs, none for CPU-only shapes).
func (w *targetWorkload) fragmentation(m int, cpu, mem int64, sorted []int64) float64 {
	var total, partial int64
	whole := 0
	for _, d := range sorted {
		total += d
		if d == DeviceMilli {
			whole++
		} else {
			partial += d
		}
	}
	if total == 0 {
		return 0
	}
	all := float64(total)
	largest := sorted[len(sorted)-1]
	frag := w.barred[m] * all
	for _, s := range w.allowed[m] {
		sh := &w.shapes[s]
		switch {
		case sh.cpu > cpu || sh.mem > mem:
			frag += sh.popularity * all
		case sh.numGPU == 0:
		case sh.sharing && largest < sh.milli, !sh.sharing && whole < sh.numGPU:
			frag += sh.popularity * all
		case sh.sharing:
			frag += sh.popularity * float64(sumBelow(sorted, sh.milli))
		default:
			frag += sh.popularity * float64(partial)
		}
	}
	return frag
}

// sumBelow sums the values of sorted (ascending) below limit.
func sumBelow(sorted []int64, limit int64) int64 {
	var sum int64
	for _, d := range sorted {
		if d >= limit {
			break
		}
		sum += d
	}
	return sum
}

// memoDevices is the most devices a node may have for its fragmentation to be
// memoized; larger nodes (none in openb) are measured every time.
const memoDevices = 8

// memoLimit bounds the memo; it starts over when full.
const memoLimit = 1 << 18

// nodeState is a node's state as fragmentation sees it: model, free CPU and
// memory, and free milli-GPU per device, sorted (devices are interchangeable).
type nodeState struct {
	model   int32
	devices int32
	cpu     int64
	mem     int64
	free    [memoDevices]int16
}

// fragMemo memoizes fragmentation by node state: many nodes share a state
// (every empty node of one type, for a start), and FGD measures the same
// states over and over.
type fragMemo struct {
	w      *targetWorkload
	memo   map[nodeState]float64
	sorted []int64 // scratch
}

func newFragMemo(w *targetWorkload) *fragMemo {
	return &fragMemo{w: w, memo: map[nodeState]float64{}}
}

// measure returns the fragmentation of a node of model m with cpu and mem
// free and devices free, after taking take milli-GPU from each device listed
// in from (the state a placement would leave).
func (fm *fragMemo) measure(m int, cpu, mem int64, free []int64, from []int, take int64) float64 {
	fm.sorted = append(fm.sorted[:0], free...)
	for _, d := range from {
		fm.sorted[d] -= take
	}
	slices.Sort(fm.sorted)
	if len(fm.sorted) > memoDevices {
		return fm.w.fragmentation(m, cpu, mem, fm.sorted)
	}
	key := nodeState{model: int32(m), devices: int32(len(fm.sorted)), cpu: cpu, mem: mem}
	for i, d := range fm.sorted {
		key.free[i] = int16(d)
	}
	if f, ok := fm.memo[key]; ok {
		return f
	}
	f := fm.w.fragmentation(m, cpu, mem, fm.sorted)
	if len(fm.memo) >= memoLimit {
		clear(fm.memo)
	}
	fm.memo[key] = f
	return f
}
