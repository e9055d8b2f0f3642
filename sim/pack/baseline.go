package pack

import (
	"math/rand/v2"
	"time"
)

// The baseline policies of the paper's evaluation. Each keeps a Cluster of
// its own and, within the node it picks, best-fit devices (the harness's
// default choice, so both states agree).

// FirstFit places a pod on the first node, in node-list order, that fits.
func FirstFit() Policy {
	return Policy{Name: "first-fit", New: func(nodes []Node, _ []Pod, _ uint64) (Placer, error) {
		return &firstFit{clusterPlacer{NewCluster(nodes)}}, nil
	}}
}

// BestFit places a pod on the node that fits with the least free GPU left
// after placement (ties: node order), on best-fit devices.
func BestFit() Policy {
	return Policy{Name: "best-fit", New: func(nodes []Node, _ []Pod, _ uint64) (Placer, error) {
		return &bestFit{clusterPlacer{NewCluster(nodes)}}, nil
	}}
}

// Random places a pod on a node drawn uniformly from those that fit, from a
// stream seeded by the run's seed.
func Random() Policy {
	return Policy{Name: "random", New: func(nodes []Node, _ []Pod, seed uint64) (Placer, error) {
		return &randomFit{
			clusterPlacer: clusterPlacer{NewCluster(nodes)},
			rng:           rand.New(rand.NewPCG(seed, streamRandomPolicy)),
		}, nil
	}}
}

// streamRandomPolicy separates the random policy's draws from the workload's,
// which share the run's seed.
const streamRandomPolicy = 0x72616e646f6d // "random"

// clusterPlacer is what the reference placers share: their own Cluster, the
// Remove that frees it and the DeviceChooser that reports its devices.
type clusterPlacer struct{ cluster *Cluster }

// placeOn applies a choice of node (and devices, nil for best fit).
func (cp *clusterPlacer) placeOn(n int, p *Pod, devices []int) (int, bool) {
	if err := cp.cluster.Place(n, p, devices); err != nil {
		return 0, false // only on a bug: callers pick nodes that fit
	}
	return n, true
}

func (cp *clusterPlacer) Remove(_ time.Duration, p *Pod) {
	// The harness removes only pods this placer placed; nothing to report.
	_, _ = cp.cluster.Remove(p.ID)
}

func (cp *clusterPlacer) Devices(p *Pod) []int {
	pl, _ := cp.cluster.Placement(p.ID)
	return pl.Devices
}

type firstFit struct{ clusterPlacer }

func (f *firstFit) Place(_ time.Duration, p *Pod) (int, bool) {
	for n := range f.cluster.Nodes() {
		if f.cluster.Fits(n, p) {
			return f.placeOn(n, p, nil)
		}
	}
	return 0, false
}

type bestFit struct{ clusterPlacer }

func (b *bestFit) Place(_ time.Duration, p *Pod) (int, bool) {
	best, bestLeft := -1, int64(0)
	for n := range b.cluster.Nodes() {
		if !b.cluster.Fits(n, p) {
			continue
		}
		if left := b.cluster.FreeGPU(n) - p.GPURequest(); best < 0 || left < bestLeft {
			best, bestLeft = n, left
		}
	}
	if best < 0 {
		return 0, false
	}
	return b.placeOn(best, p, nil)
}

type randomFit struct {
	clusterPlacer
	rng  *rand.Rand
	fits []int // scratch: the nodes that fit the pod being placed
}

func (r *randomFit) Place(_ time.Duration, p *Pod) (int, bool) {
	r.fits = r.fits[:0]
	for n := range r.cluster.Nodes() {
		if r.cluster.Fits(n, p) {
			r.fits = append(r.fits, n)
		}
	}
	if len(r.fits) == 0 {
		return 0, false
	}
	return r.placeOn(r.fits[r.rng.IntN(len(r.fits))], p, nil)
}
