package pack

import (
	"fmt"
	"slices"
	"time"
)

// harness runs one placer under watch. It keeps its own Cluster and its own
// copy of the workload, checks every placement the placer reports against
// that state and applies it there, so a placer that overcommits fails the
// run instead of inflating its metrics, and every metric comes from the
// harness's state.
type harness struct {
	policy  string
	placer  Placer
	chooser DeviceChooser // nil when the placer picks nodes only
	cluster *Cluster
	pods    []Pod // the harness's copy of the workload
	theirs  []Pod // the placer's copy, so that it cannot change ours
}

// newHarness builds policy's placer for one run of workload (pods with IDs
// 0..len-1) on nodes.
func newHarness(policy Policy, nodes []Node, workload []Pod, seed uint64) (*harness, error) {
	h := &harness{
		policy:  policy.Name,
		cluster: NewCluster(slices.Clone(nodes)),
		pods:    workload,
		theirs:  slices.Clone(workload),
	}
	placer, err := policy.New(slices.Clone(nodes), h.theirs, seed)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", policy.Name, err)
	}
	h.placer = placer
	h.chooser, _ = placer.(DeviceChooser)
	return h, nil
}

// place offers pod i to the placer. It reports whether the pod was placed;
// its error is a placement the harness's state cannot hold.
func (h *harness) place(now time.Duration, i int) (bool, error) {
	node, ok := h.placer.Place(now, &h.theirs[i])
	if !ok {
		return false, nil
	}
	p := &h.pods[i]
	var devices []int
	if h.chooser != nil {
		// An empty choice is fine for a CPU-only pod; Place checks the count.
		devices = h.chooser.Devices(&h.theirs[i])
		if devices == nil {
			devices = []int{}
		}
	}
	if err := h.cluster.Place(node, p, devices); err != nil {
		return false, fmt.Errorf("policy %s placed pod %d (%s) on node %d: %w", h.policy, p.ID, p.Name, node, err)
	}
	return true, nil
}

// remove takes placed pod i off the cluster and tells the placer.
func (h *harness) remove(now time.Duration, i int) error {
	if _, err := h.cluster.Remove(i); err != nil {
		return fmt.Errorf("policy %s: %w", h.policy, err)
	}
	h.placer.Remove(now, &h.theirs[i])
	return nil
}

// numberPods returns a copy of pods with IDs 0..len-1, the harness's
// convention (IDs index the workload).
func numberPods(pods []Pod) []Pod {
	out := slices.Clone(pods)
	for i := range out {
		out[i].ID = i
	}
	return out
}
