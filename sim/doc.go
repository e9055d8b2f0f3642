// Package sim holds allot's simulators. Each replays a workload against the
// same pure code the master runs (the offers allocator, and later the
// altruism planner and coflow schedulers), so anyone can check the
// scheduling decisions from outside a cluster.
package sim
