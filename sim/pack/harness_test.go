package pack

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// A placer that puts everything on node 0 overcommits it; the run fails
// instead of reporting the placements.
func TestPack_HarnessRejectsOvercommit(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 1, "T4"), gpuNode("n1", 1, "T4")}
	trace := []Pod{wholePod(0, 1), wholePod(1, 1), wholePod(2, 1)}
	_, err := RunFill(FillConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{1}}, []Policy{fixedPolicy(0)})
	if !errors.Is(err, ErrDoesNotFit) || !strings.Contains(err.Error(), "policy fixed placed pod") {
		t.Fatalf("error %v, want the fixed policy's overcommit", err)
	}
	_, err = RunFill(FillConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{1}}, []Policy{fixedPolicy(7)})
	if !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("a node out of range: %v", err)
	}
	trace[0].Deleted, trace[0].Scheduled = 10, 0
	_, err = RunReplay(ReplayConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{1}, Speedup: 1}, []Policy{fixedPolicy(0)})
	if !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("replay: %v, want the overcommit", err)
	}
}

// liarPlacer picks node 0 honestly but names a device its pod cannot have.
type liarPlacer struct{ fixedPlacer }

func (liarPlacer) Devices(*Pod) []int { return []int{5} }

// The harness applies a DeviceChooser's devices only after checking them,
// and otherwise chooses best fit itself.
func TestPack_HarnessChecksDevices(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 2, "T4")}
	pods := []Pod{sharingPod(0, 500)}
	liar := Policy{Name: "liar", New: func([]Node, []Pod, uint64) (Placer, error) { return liarPlacer{}, nil }}
	h, err := newHarness(liar, nodes, pods, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.place(0, 0); !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("device 5 of 2: %v", err)
	}
	if h.cluster.AllocatedGPU() != 0 {
		t.Fatalf("a refused placement allocated %d", h.cluster.AllocatedGPU())
	}

	pods = []Pod{sharingPod(0, 300), sharingPod(1, 300), sharingPod(2, 300)}
	h, err = newHarness(fixedPolicy(0), nodes, pods, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		if ok, err := h.place(0, i); !ok || err != nil {
			t.Fatalf("pod %d: %v %v", i, ok, err)
		}
	}
	if got := h.cluster.Free(0).Devices; !slices.Equal(got, []int64{100, 1000}) {
		t.Fatalf("harness's best fit left devices %v, want [100 1000]", got)
	}
}

// recordingPlacer wraps a placer and records the clock of each call.
type recordingPlacer struct {
	Placer
	placed  map[string]time.Duration
	removed map[string]time.Duration
}

func (r *recordingPlacer) Place(now time.Duration, p *Pod) (int, bool) {
	n, ok := r.Placer.Place(now, p)
	if ok {
		r.placed[p.Name] = now
	}
	return n, ok
}

func (r *recordingPlacer) Remove(now time.Duration, p *Pod) {
	r.removed[p.Name] = now
	r.Placer.Remove(now, p)
}
