package pack

import (
	"slices"
	"strings"
)

// DeviceMilli is the capacity of one GPU device in milli-GPU.
const DeviceMilli = 1000

// NoTime marks a trace time the trace left empty (a pod never scheduled has
// no scheduled time).
const NoTime int64 = -1

// Pod is one pod of a workload: what it asks for and, for replays, when the
// trace says it was created, scheduled and deleted.
type Pod struct {
	// ID identifies the pod within one run: its index in the run's workload.
	// A workload may hold several copies of one trace pod (fill mode samples
	// with replacement), so placers must key their bookkeeping by ID, not Name.
	ID   int
	Name string

	CPUMilli  int64
	MemoryMiB int64
	// NumGPU is the number of devices the pod uses (0 for a CPU-only pod).
	NumGPU int
	// GPUMilli is what the pod asks of each of its devices: below
	// DeviceMilli for a sharing pod (NumGPU 1), DeviceMilli for a pod of
	// whole GPUs, 0 for a CPU-only pod.
	GPUMilli int64
	// Models lists the GPU models the pod may run on (the trace's gpu_spec);
	// empty means any.
	Models []string

	QoS   string
	Phase string
	// Trace times in seconds; Scheduled and Deleted may be NoTime.
	Created, Scheduled, Deleted int64
}

// Sharing reports whether the pod asks for part of one GPU device.
func (p *Pod) Sharing() bool { return p.NumGPU == 1 && p.GPUMilli < DeviceMilli }

// GPURequest is the pod's total GPU request in milli-GPU: the share of one
// device for a sharing pod, NumGPU whole devices otherwise.
func (p *Pod) GPURequest() int64 { return int64(p.NumGPU) * p.GPUMilli }

// AllowsModel reports whether the pod may run on a node with GPUs of this
// model.
func (p *Pod) AllowsModel(model string) bool {
	return len(p.Models) == 0 || slices.Contains(p.Models, model)
}

// Shape is what a pod asks for, without its identity and times: FGD weighs
// the workload's shapes by popularity.
type Shape struct {
	CPUMilli  int64
	MemoryMiB int64
	NumGPU    int
	GPUMilli  int64
	// Models is the pod's allowed models joined by "|" ("" for any), so that
	// Shape stays comparable.
	Models string
}

// Shape returns the pod's shape.
func (p *Pod) Shape() Shape {
	return Shape{
		CPUMilli:  p.CPUMilli,
		MemoryMiB: p.MemoryMiB,
		NumGPU:    p.NumGPU,
		GPUMilli:  p.GPUMilli,
		Models:    strings.Join(p.Models, "|"),
	}
}

// GPURequestTotal sums the GPU requests of pods, in milli-GPU.
func GPURequestTotal(pods []Pod) int64 {
	var total int64
	for i := range pods {
		total += pods[i].GPURequest()
	}
	return total
}
