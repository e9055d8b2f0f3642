package pack

import (
	"math"
	"slices"
	"testing"
)

func TestPack_FirstFitPicksTheFirstNode(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 1, "T4"), gpuNode("n1", 2, "T4"), gpuNode("n2", 2, "A10")}
	pods := []Pod{sharingPod(0, 600), sharingPod(1, 600), wholePod(2, 2), sharingPod(3, 300)}
	pods[2].Models = []string{"A10"}
	// 600 -> n0; 600 no longer fits n0 -> n1; 2 GPUs of A10 -> n2; 300 -> n0 again.
	if got, want := placeAll(newPlacer(t, FirstFit(), nodes, pods), pods), []int{0, 1, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("first-fit placed on %v, want %v", got, want)
	}
}

func TestPack_BestFitPicksTheFullestNode(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 4, "T4"), gpuNode("n1", 2, "T4"), gpuNode("n2", 2, "T4")}
	pods := []Pod{sharingPod(0, 300), sharingPod(1, 500), wholePod(2, 1), cpuPod(3, 1000)}
	placer := newPlacer(t, BestFit(), nodes, pods)
	// 300: n1 and n2 both leave 1700 (tie: n1). 500: n1 leaves 1200, the
	// least. A whole GPU: n1 has one wholly free device and leaves 200. A
	// CPU-only pod goes where the least GPU is free: n1 again.
	if got, want := placeAll(placer, pods), []int{1, 1, 1, 1}; !slices.Equal(got, want) {
		t.Fatalf("best-fit placed on %v, want %v", got, want)
	}
	// Devices within the node are best fit too: the 500 pod joined the 300.
	if devs := placer.(DeviceChooser).Devices(&pods[1]); !slices.Equal(devs, []int{0}) {
		t.Fatalf("500 pod on devices %v, want [0]", devs)
	}
}

func TestPack_RandomPicksAmongFittingNodes(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 1, "T4"), gpuNode("n1", 1, "A10"), gpuNode("n2", 1, "T4"), gpuNode("n3", 1, "T4")}
	var pods []Pod
	for i := range 60 {
		p := sharingPod(i, 10)
		p.Models = []string{"T4"}
		pods = append(pods, p)
	}
	placed := func(seed uint64) []int {
		placer, err := Random().New(nodes, pods, seed)
		if err != nil {
			t.Fatal(err)
		}
		return placeAll(placer, pods)
	}
	got := placed(1)
	seen := map[int]int{}
	for _, n := range got {
		seen[n]++
	}
	if seen[1] != 0 || seen[-1] != 0 || seen[0] == 0 || seen[2] == 0 || seen[3] == 0 {
		t.Fatalf("random placements per node %v: want every T4 node, never the A10 one", seen)
	}
	if !slices.Equal(got, placed(1)) {
		t.Fatal("random is not deterministic for a seed")
	}
	if slices.Equal(got, placed(2)) {
		t.Fatal("seeds 1 and 2 placed 60 pods identically")
	}
}

// FGD on two one-GPU nodes with a workload of two shapes, sharing 300 and
// sharing 600, each of popularity 1/2. Fragmentation of a device with f
// milli free: shape 600 fragments all of f when f < 600 (it cannot fit),
// shape 300 when f < 300.
//
//	pod 0 (300): either node goes 1000 -> 700, F 0 -> 0: tie, node 0.
//	pod 1 (300): node 0 700 -> 400, F 0 -> 400*1/2 = 200 (600 no longer
//	  fits); node 1 1000 -> 700, F 0 -> 0. FGD picks node 1, where best-fit
//	  and first-fit pick node 0.
//	pod 2 (600): either node 700 -> 100, F 0 -> 100: tie, node 0.
//	pod 3 (600): node 1, the only one left.
//
// FGD places all four; best-fit strands the second 600 pod.
func TestPack_FGDAvoidsFragmentingNodes(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 1, "T4"), gpuNode("n1", 1, "T4")}
	pods := []Pod{sharingPod(0, 300), sharingPod(1, 300), sharingPod(2, 600), sharingPod(3, 600)}
	if got, want := placeAll(newPlacer(t, FGD(), nodes, pods), pods), []int{0, 1, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("fgd placed on %v, want %v", got, want)
	}
	if got, want := placeAll(newPlacer(t, BestFit(), nodes, pods), pods), []int{0, 0, 1, -1}; !slices.Equal(got, want) {
		t.Fatalf("best-fit placed on %v, want %v", got, want)
	}
}

// FGD picks the device too. Same workload, one node of two devices with 700
// and 1000 free, a 300 pod: on device 0 it leaves [400 1000], where device 0
// cannot serve shape 600: F = 400*1/2 = 200; on device 1 it leaves
// [700 700], F = 0. FGD takes device 1, the emptier one, against best fit;
// the harness applies FGD's choice.
func TestPack_FGDPicksTheDevice(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 2, "T4")}
	pods := []Pod{sharingPod(0, 300), sharingPod(1, 300), sharingPod(2, 600), sharingPod(3, 600)}
	h, err := newHarness(FGD(), nodes, pods, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if ok, err := h.place(0, i); !ok || err != nil {
			t.Fatalf("pod %d: %v %v", i, ok, err)
		}
	}
	if got := h.cluster.Free(0).Devices; !slices.Equal(got, []int64{700, 700}) {
		t.Fatalf("devices after two 300 pods: %v, want [700 700]", got)
	}
}

// The fragmentation measure against a hand-computed mix: a node with CPU
// 4000 free and devices [250 1000], shapes sharing 500 (1/2), one whole GPU
// (1/4), CPU-only of 8000 milli-CPU (1/4):
//
//	sharing 500 fits (device 1); device 0 (250 < 500) is fragmented: 1/2*250
//	one GPU fits (device 1); device 0 is not whole:                  1/4*250
//	CPU-only cannot fit (CPU): every free milli,                1/4*1250
//
// F = 125 + 62.5 + 312.5 = 500. A shape barred from the node's model
// fragments every free milli as well.
func TestPack_FragmentationMeasure(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 2, "T4")}
	workload := []Pod{sharingPod(0, 500), sharingPod(1, 500), wholePod(2, 1), cpuPod(3, 8000)}
	w := newTargetWorkload(nodes, workload)
	if got := w.fragmentation(0, 4000, 100000, []int64{250, 1000}); math.Abs(got-500) > 1e-9 {
		t.Fatalf("F = %v, want 500", got)
	}
	// With CPU to spare the CPU-only shape fragments nothing: 187.5.
	if got := w.fragmentation(0, 9000, 100000, []int64{250, 1000}); math.Abs(got-187.5) > 1e-9 {
		t.Fatalf("F = %v, want 187.5", got)
	}
	workload[1].Models = []string{"A10"} // now 1/4 sharing 500 anywhere, 1/4 on A10 only
	w = newTargetWorkload(nodes, workload)
	// 1/4*250 + 1/4*1250 (barred) + 1/4*250 + 0 = 437.5
	if got := w.fragmentation(0, 9000, 100000, []int64{250, 1000}); math.Abs(got-437.5) > 1e-9 {
		t.Fatalf("F with a barred shape = %v, want 437.5", got)
	}
	memo := newFragMemo(w)
	first := memo.measure(0, 9000, 100000, []int64{1000, 250}, nil, 0)
	if math.Abs(first-437.5) > 1e-9 || len(memo.memo) != 1 {
		t.Fatalf("memo: F %v with %d entries", first, len(memo.memo))
	}
	// The state a placement would leave, devices in another order: the same entry.
	if again := memo.measure(0, 9000, 100000, []int64{1000, 1000}, []int{0}, 750); again != first || len(memo.memo) != 1 {
		t.Fatalf("memo: F %v with %d entries, want %v from 1", again, len(memo.memo), first)
	}
}
