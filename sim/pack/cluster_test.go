package pack

import (
	"errors"
	"slices"
	"testing"
)

// Two 500-milli sharing pods share one device; a 600-milli pod then does not
// fit on it, only on the other device; removing a pod frees its share.
func TestPack_SharingPodsShareADevice(t *testing.T) {
	t.Parallel()
	c := NewCluster([]Node{gpuNode("n0", 2, "T4")})
	a, b, big := sharingPod(0, 500), sharingPod(1, 500), sharingPod(2, 600)
	for _, p := range []*Pod{&a, &b} {
		if err := c.Place(0, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if pa, _ := c.Placement(0); !slices.Equal(pa.Devices, []int{0}) {
		t.Fatalf("first pod on devices %v, want [0]", pa.Devices)
	}
	if pb, _ := c.Placement(1); !slices.Equal(pb.Devices, []int{0}) {
		t.Fatalf("second pod on devices %v, want [0] (best fit: the half-used device)", pb.Devices)
	}
	if err := c.Place(0, &big, []int{0}); !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("600 milli on the full device 0: %v, want ErrDoesNotFit", err)
	}
	if err := c.Place(0, &big, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.Free(0).Devices; !slices.Equal(got, []int64{0, 400}) {
		t.Fatalf("free devices %v, want [0 400]", got)
	}
	if c.AllocatedGPU() != 1600 {
		t.Fatalf("allocated %d, want 1600", c.AllocatedGPU())
	}
	if _, err := c.Remove(1); err != nil {
		t.Fatal(err)
	}
	if got := c.Free(0).Devices; !slices.Equal(got, []int64{500, 400}) || c.AllocatedGPU() != 1100 {
		t.Fatalf("after removing a 500 pod: free %v, allocated %d", got, c.AllocatedGPU())
	}
	if _, err := c.Remove(1); err == nil {
		t.Fatal("removing a pod twice succeeded")
	}
}

// A pod of 8 GPUs needs 8 wholly free devices: one device with 1 milli used
// is enough to refuse it.
func TestPack_WholeGPUsNeedFreeDevices(t *testing.T) {
	t.Parallel()
	c := NewCluster([]Node{gpuNode("n0", 8, "G2")})
	eight := wholePod(0, 8)
	if !c.Fits(0, &eight) {
		t.Fatal("8-GPU pod does not fit an empty 8-GPU node")
	}
	tiny := sharingPod(1, 1)
	if err := c.Place(0, &tiny, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.FitError(0, &eight); !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("8-GPU pod next to a 1-milli pod: %v, want ErrDoesNotFit", err)
	}
	seven := wholePod(2, 7)
	if err := c.Place(0, &seven, nil); err != nil {
		t.Fatal(err)
	}
	if pl, _ := c.Placement(2); !slices.Equal(pl.Devices, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("7-GPU pod on devices %v", pl.Devices)
	}
	// A whole GPU never lands on a partly used device, even when named.
	c2 := NewCluster([]Node{gpuNode("n0", 2, "G2")})
	one := wholePod(0, 1)
	if err := c2.Place(0, &tiny, nil); err != nil {
		t.Fatal(err)
	}
	if err := c2.Place(0, &one, []int{0}); !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("whole GPU on a used device: %v", err)
	}
}

func TestPack_FitChecksCPUMemoryAndModel(t *testing.T) {
	t.Parallel()
	c := NewCluster([]Node{
		{Name: "small", CPUMilli: 2000, MemoryMiB: 2048, GPUs: 1, Model: "T4"},
		gpuNode("v100", 4, "V100M32"),
		{Name: "cpu", CPUMilli: 64000, MemoryMiB: 262144},
	})
	p := sharingPod(0, 100)
	p.Models = []string{"V100M16", "V100M32"}
	for n, want := range []bool{false, true, false} {
		if got := c.Fits(n, &p); got != want {
			t.Errorf("V100-only pod on node %d: fits %v, want %v", n, got, want)
		}
	}
	hungry := cpuPod(1, 3000)
	if c.Fits(0, &hungry) || !c.Fits(2, &hungry) {
		t.Error("a 3000 milli-CPU pod: want no on the 2000 node, yes on the CPU node")
	}
	fat := cpuPod(2, 1000)
	fat.MemoryMiB = 4096
	if err := c.FitError(0, &fat); !errors.Is(err, ErrDoesNotFit) {
		t.Errorf("4096 MiB on a 2048 MiB node: %v", err)
	}
	if err := c.FitError(3, &fat); !errors.Is(err, ErrDoesNotFit) {
		t.Errorf("a node out of range: %v", err)
	}
	// A failed placement changes nothing.
	before := c.Free(1)
	if err := c.Place(1, &p, []int{0, 1}); err == nil {
		t.Fatal("two devices for a sharing pod accepted")
	}
	if after := c.Free(1); !slices.Equal(after.Devices, before.Devices) || after.CPUMilli != before.CPUMilli {
		t.Fatalf("a refused placement changed the node: %+v -> %+v", before, after)
	}
}
