package pack

// Node is one machine of the cluster: its CPU, memory and GPU devices, all of
// one model.
type Node struct {
	Name      string
	CPUMilli  int64
	MemoryMiB int64
	// GPUs is the number of devices, each of DeviceMilli.
	GPUs int
	// Model is the GPU model ("" on a node without GPUs).
	Model string
}

// GPUCapacity sums the GPU capacity of nodes, in milli-GPU.
func GPUCapacity(nodes []Node) int64 {
	var total int64
	for _, n := range nodes {
		total += int64(n.GPUs) * DeviceMilli
	}
	return total
}
