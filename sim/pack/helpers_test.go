package pack

import (
	"testing"
	"time"
)

// Builders for small hand-made clusters and workloads. Nodes have room
// enough in CPU and memory unless a test says otherwise.

func gpuNode(name string, gpus int, model string) Node {
	return Node{Name: name, CPUMilli: 64000, MemoryMiB: 262144, GPUs: gpus, Model: model}
}

func sharingPod(id int, milli int64) Pod {
	return Pod{ID: id, Name: "share", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: milli, Scheduled: NoTime, Deleted: NoTime}
}

func wholePod(id, gpus int) Pod {
	return Pod{ID: id, Name: "whole", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: gpus, GPUMilli: DeviceMilli, Scheduled: NoTime, Deleted: NoTime}
}

func cpuPod(id int, cpu int64) Pod {
	return Pod{ID: id, Name: "cpu", CPUMilli: cpu, MemoryMiB: 1024, Scheduled: NoTime, Deleted: NoTime}
}

// newPlacer builds policy's placer or fails the test.
func newPlacer(t *testing.T, policy Policy, nodes []Node, workload []Pod) Placer {
	t.Helper()
	p, err := policy.New(nodes, workload, 1)
	if err != nil {
		t.Fatalf("%s: %v", policy.Name, err)
	}
	return p
}

// placeAll offers pods to placer in order and returns the node of each
// (-1 for a pod it did not place).
func placeAll(placer Placer, pods []Pod) []int {
	nodes := make([]int, len(pods))
	for i := range pods {
		n, ok := placer.Place(0, &pods[i])
		if !ok {
			n = -1
		}
		nodes[i] = n
	}
	return nodes
}

// fixedPlacer places every pod on one node without checking: an
// overcommitting placer.
type fixedPlacer struct{ node int }

func (f fixedPlacer) Place(time.Duration, *Pod) (int, bool) { return f.node, true }
func (fixedPlacer) Remove(time.Duration, *Pod)              {}

func fixedPolicy(node int) Policy {
	return Policy{Name: "fixed", New: func([]Node, []Pod, uint64) (Placer, error) { return fixedPlacer{node}, nil }}
}
