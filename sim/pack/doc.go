// Package pack simulates GPU-sharing placement: it replays a cluster trace
// (by default Alibaba's openb trace, embedded under data/openb) through
// pluggable placement policies and measures how much of the cluster's GPU
// capacity each one manages to allocate, as in "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent"
// (Weng et al., USENIX ATC 2023).
//
// A policy is a [Placer] built per run by a [Policy]. The package ships
// reference policies (random, first-fit, best-fit and FGD, see [Policies]);
// other placers, such as one driving the master's allocator, plug in through
// the same two types. The harness never trusts a placer: it keeps its own
// device-level [Cluster], checks every placement against it and computes every
// metric from it.
//
// Two protocols drive the placers: [RunFill], the paper's evaluation (pods
// arrive in a shuffled order until 130% of the GPU capacity was requested, none
// departs, a pod that does not fit fails), and [RunReplay], which replays the
// trace's own arrival and departure times with a FIFO queue of waiting pods.
//
// The package is pure apart from reading trace files: no goroutines outside
// [RunFill] and [RunReplay], which run independent (policy, seed) pairs in
// parallel, and no clock.
package pack
