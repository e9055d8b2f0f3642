package pack

import (
	"math"
	"slices"
	"testing"
	"time"
)

// The arrival order is the trace shuffled, then resampled until 130% of the
// capacity is requested, and the same for the same seed.
func TestPack_FillWorkloadReaches130Percent(t *testing.T) {
	t.Parallel()
	var trace []Pod
	for i := range 20 {
		p := sharingPod(i, int64(100+10*i))
		p.Name = string(rune('a' + i))
		trace = append(trace, p)
	}
	capacity := int64(4 * DeviceMilli) // the trace asks for 4900 of it
	w, err := FillWorkload(trace, capacity, 7)
	if err != nil {
		t.Fatal(err)
	}
	total := GPURequestTotal(w)
	if total*100 < capacity*FillTargetPercent {
		t.Fatalf("requested %d of %d", total, capacity)
	}
	if last := w[len(w)-1].GPURequest(); (total-last)*100 >= capacity*FillTargetPercent {
		t.Fatalf("requested %d without the last pod: it should not have been appended", total-last)
	}
	names := func(pods []Pod) []string {
		out := make([]string, len(pods))
		for i, p := range pods {
			out[i] = p.Name
		}
		return out
	}
	head := names(w[:len(trace)])
	if slices.Equal(head, names(trace)) {
		t.Fatal("the trace was not shuffled")
	}
	slices.Sort(head)
	if !slices.Equal(head, names(trace)) {
		t.Fatalf("the first %d arrivals are not the trace: %v", len(trace), head)
	}
	for i, p := range w {
		if p.ID != i {
			t.Fatalf("arrival %d has ID %d", i, p.ID)
		}
	}
	again, _ := FillWorkload(trace, capacity, 7)
	if !slices.Equal(names(w), names(again)) {
		t.Fatal("FillWorkload is not deterministic for a seed")
	}
	other, _ := FillWorkload(trace, capacity, 8)
	if slices.Equal(names(w), names(other)) {
		t.Fatal("seeds 7 and 8 gave the same arrivals")
	}
	if _, err := FillWorkload([]Pod{cpuPod(0, 1)}, capacity, 1); err == nil {
		t.Fatal("a workload without GPU requests was accepted")
	}
}

// Five 400-milli pods on one GPU: two fit, the rest fail. Arrivals request
// 40%, 80%, 120%, 160%, 200%; the allocation is 40%, 80%, 80%, ...
func TestPack_FillMetrics(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 1, "T4")}
	var trace []Pod
	for i := range 5 {
		trace = append(trace, sharingPod(i, 400))
	}
	r, err := RunFill(FillConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{1, 2}}, []Policy{FirstFit(), FGD()})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Policies) != 2 || r.Policies[1].Policy != "fgd" || r.GPUs != 1 || r.TracePods != 5 {
		t.Fatalf("report %+v", r)
	}
	for _, p := range r.Policies {
		if p.AllocAt100 != 0.8 || p.FirstLossAt != 1.2 || p.Failed != 3 || p.Arrivals != 5 || len(p.Runs) != 2 {
			t.Errorf("%s: %+v", p.Policy, p)
		}
		want := []float64{0.4, 0.4, 0.4, 0.4, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8}
		for k, pt := range p.Curve {
			if math.Abs(pt.Arrived-float64(k+1)/10) > 1e-9 || math.Abs(pt.Allocated-want[k]) > 1e-9 {
				t.Errorf("%s: curve point %d = %+v, want allocated %v", p.Policy, k, pt, want[k])
			}
		}
	}
}

// halfPlacer places pods with even IDs (first fit) and refuses the others:
// the metrics must follow what was placed.
type halfPlacer struct{ firstFit }

func (h *halfPlacer) Place(now time.Duration, p *Pod) (int, bool) {
	if p.ID%2 == 1 {
		return 0, false
	}
	return h.firstFit.Place(now, p)
}

// Metrics come from the harness's state: a placer refusing every other pod
// of a workload that would all fit loses from the first refusal.
func TestPack_FillMetricsFromHarness(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 8, "G2"), gpuNode("n1", 8, "G2")}
	var trace []Pod
	for i := range 26 {
		trace = append(trace, wholePod(i, 1))
	}
	half := Policy{Name: "half", New: func(nodes []Node, _ []Pod, _ uint64) (Placer, error) {
		return &halfPlacer{firstFit{clusterPlacer{NewCluster(nodes)}}}, nil
	}}
	r, err := RunFill(FillConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{3}}, []Policy{half})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Policies[0]
	// 16 GPUs: the 16th arrival (100%) follows 8 placed pods; the first loss
	// (1 GPU, over 1%) is at the 2nd arrival, 2/16 requested.
	if p.AllocAt100 != 0.5 || p.FirstLossAt != 0.125 || p.Failed != 13 {
		t.Fatalf("%+v", p)
	}
}
