package pack

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrDoesNotFit is the error of a placement the cluster cannot hold.
var ErrDoesNotFit = errors.New("pod does not fit")

// Cluster is the device-level state of a cluster: each node's free CPU,
// memory and per-device free milli-GPU, and which node and devices every
// placed pod holds. The harness keeps one to check placers; reference placers
// keep their own. It is not safe for concurrent use.
type Cluster struct {
	nodes      []Node
	free       []NodeFree
	placements map[int]Placement
	allocated  int64 // GPU milli held by placed pods
	capacity   int64
}

// NodeFree is what is left on a node.
type NodeFree struct {
	CPUMilli  int64
	MemoryMiB int64
	// Devices holds each device's free milli-GPU, in device order.
	Devices []int64
}

// Placement is where a placed pod sits.
type Placement struct {
	Node int
	// Devices are the indices of the node's devices the pod holds (none for a
	// CPU-only pod).
	Devices []int
	pod     Pod
}

// NewCluster returns an empty cluster of nodes.
func NewCluster(nodes []Node) *Cluster {
	c := &Cluster{
		nodes:      nodes,
		free:       make([]NodeFree, len(nodes)),
		placements: map[int]Placement{},
		capacity:   GPUCapacity(nodes),
	}
	for i, n := range nodes {
		devices := make([]int64, n.GPUs)
		for d := range devices {
			devices[d] = DeviceMilli
		}
		c.free[i] = NodeFree{CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB, Devices: devices}
	}
	return c
}

// Nodes returns the cluster's nodes; callers must not modify them.
func (c *Cluster) Nodes() []Node { return c.nodes }

// Free returns a copy of what is left on node n.
func (c *Cluster) Free(n int) NodeFree {
	f := c.free[n]
	f.Devices = slices.Clone(f.Devices)
	return f
}

// FreeGPU is node n's free GPU in milli-GPU, summed over its devices.
func (c *Cluster) FreeGPU(n int) int64 {
	var sum int64
	for _, d := range c.free[n].Devices {
		sum += d
	}
	return sum
}

// AllocatedGPU is the GPU held by placed pods, in milli-GPU.
func (c *Cluster) AllocatedGPU() int64 { return c.allocated }

// CapacityGPU is the cluster's GPU capacity, in milli-GPU.
func (c *Cluster) CapacityGPU() int64 { return c.capacity }

// Placement returns where the pod with this ID sits, if it is placed.
func (c *Cluster) Placement(id int) (Placement, bool) {
	pl, ok := c.placements[id]
	return pl, ok
}

// Fits reports whether p fits on node n now: CPU, memory, GPU model and
// devices (one with p.GPUMilli free for a sharing pod, p.NumGPU wholly free
// ones for whole GPUs, none for a CPU-only pod). A pod with a GPU model list
// fits only nodes of those models, even if it asks for no GPU. Fits is the
// placers' hot path, so it allocates nothing.
func (c *Cluster) Fits(n int, p *Pod) bool {
	if n < 0 || n >= len(c.nodes) {
		return false
	}
	f := &c.free[n]
	if p.CPUMilli > f.CPUMilli || p.MemoryMiB > f.MemoryMiB || !p.AllowsModel(c.nodes[n].Model) {
		return false
	}
	return p.NumGPU == 0 || devicesFit(f.Devices, p)
}

// devicesFit reports whether devices with these free milli-GPU can hold p.
func devicesFit(free []int64, p *Pod) bool {
	if p.Sharing() {
		for _, f := range free {
			if f >= p.GPUMilli {
				return true
			}
		}
		return false
	}
	whole := 0
	for _, f := range free {
		if f == DeviceMilli {
			whole++
		}
	}
	return whole >= p.NumGPU
}

// FitError says why p does not fit on node n now (nil if it does). Its errors
// wrap ErrDoesNotFit.
func (c *Cluster) FitError(n int, p *Pod) error {
	if c.Fits(n, p) {
		return nil
	}
	if n < 0 || n >= len(c.nodes) {
		return fmt.Errorf("%w: no node %d in a cluster of %d", ErrDoesNotFit, n, len(c.nodes))
	}
	f := &c.free[n]
	switch {
	case p.CPUMilli > f.CPUMilli:
		return fmt.Errorf("%w: asks %d milli-CPU, %d free", ErrDoesNotFit, p.CPUMilli, f.CPUMilli)
	case p.MemoryMiB > f.MemoryMiB:
		return fmt.Errorf("%w: asks %d MiB, %d free", ErrDoesNotFit, p.MemoryMiB, f.MemoryMiB)
	case !p.AllowsModel(c.nodes[n].Model):
		return fmt.Errorf("%w: asks for GPU model %s, node has %q", ErrDoesNotFit, strings.Join(p.Models, "|"), c.nodes[n].Model)
	}
	return fmt.Errorf("%w: asks %d device(s) of %d milli-GPU, free devices %v", ErrDoesNotFit, p.NumGPU, p.GPUMilli, f.Devices)
}

// BestFitDevices picks the devices p would take on node n: for a sharing pod
// the device with the least free milli-GPU that still holds it (ties: the
// lower index), for whole GPUs the first wholly free ones. It reports false if
// the devices cannot hold p (it does not check CPU, memory or model).
func (c *Cluster) BestFitDevices(n int, p *Pod) ([]int, bool) {
	return bestFitDevices(c.free[n].Devices, p)
}

func bestFitDevices(free []int64, p *Pod) ([]int, bool) {
	switch {
	case p.NumGPU == 0:
		return nil, true
	case p.Sharing():
		best := -1
		for d, f := range free {
			if f >= p.GPUMilli && (best < 0 || f < free[best]) {
				best = d
			}
		}
		if best < 0 {
			return nil, false
		}
		return []int{best}, true
	}
	devices := make([]int, 0, p.NumGPU)
	for d, f := range free {
		if f == DeviceMilli {
			devices = append(devices, d)
			if len(devices) == p.NumGPU {
				return devices, true
			}
		}
	}
	return nil, false
}

// Place puts p on node n, on the given devices, or on BestFitDevices when
// devices is nil. It checks everything first (the pod is not placed yet, it
// fits, the devices are the right number, distinct and have room) and changes
// nothing on error.
func (c *Cluster) Place(n int, p *Pod, devices []int) error {
	if pl, ok := c.placements[p.ID]; ok {
		return fmt.Errorf("pod %d (%s) is already placed on node %d", p.ID, p.Name, pl.Node)
	}
	if err := c.FitError(n, p); err != nil {
		return err
	}
	f := &c.free[n]
	if devices == nil {
		devices, _ = bestFitDevices(f.Devices, p)
	} else if err := checkDevices(f.Devices, p, devices); err != nil {
		return err
	}
	f.CPUMilli -= p.CPUMilli
	f.MemoryMiB -= p.MemoryMiB
	for _, d := range devices {
		f.Devices[d] -= p.GPUMilli
	}
	c.allocated += p.GPURequest()
	c.placements[p.ID] = Placement{Node: n, Devices: slices.Clone(devices), pod: *p}
	return nil
}

// checkDevices verifies a placer's choice of devices for p.
func checkDevices(free []int64, p *Pod, devices []int) error {
	if len(devices) != p.NumGPU {
		return fmt.Errorf("%w: %d device(s) chosen for a pod of %d", ErrDoesNotFit, len(devices), p.NumGPU)
	}
	for i, d := range devices {
		if d < 0 || d >= len(free) {
			return fmt.Errorf("%w: no device %d on a node of %d", ErrDoesNotFit, d, len(free))
		}
		if slices.Contains(devices[:i], d) {
			return fmt.Errorf("%w: device %d chosen twice", ErrDoesNotFit, d)
		}
		if free[d] < p.GPUMilli {
			return fmt.Errorf("%w: device %d has %d milli-GPU free, pod asks %d", ErrDoesNotFit, d, free[d], p.GPUMilli)
		}
	}
	return nil
}

// Remove takes the pod with this ID off its node and returns where it was.
func (c *Cluster) Remove(id int) (Placement, error) {
	pl, ok := c.placements[id]
	if !ok {
		return pl, fmt.Errorf("pod %d is not placed", id)
	}
	delete(c.placements, id)
	f := &c.free[pl.Node]
	f.CPUMilli += pl.pod.CPUMilli
	f.MemoryMiB += pl.pod.MemoryMiB
	for _, d := range pl.Devices {
		f.Devices[d] += pl.pod.GPUMilli
	}
	c.allocated -= pl.pod.GPURequest()
	return pl, nil
}
