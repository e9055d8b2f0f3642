// Package sim is the home of allot's simulators, one package each. Each
// replays a workload against the same pure code the master runs (the offers
// allocator, the altruism planner, the coflow coordinator), so anyone can
// check the scheduling decisions from outside a cluster:
//
//   - sim/carbyne: DAG jobs under Carbyne and its baselines;
//   - sim/phoenix: constraint-aware hybrid schedulers (Phoenix and its
//     baselines);
//   - sim/coflowsim: coflow scheduling (Philae and its baselines) on
//     Coflow-Benchmark traces;
//   - sim/hdrf: H-DRF scenarios under the allocation policies;
//   - sim/pack: GPU cluster traces through placement policies.
//
// What several of them share (summary statistics, table layout, running
// comparisons in parallel) lives under sim/internal. This package itself
// holds no code.
package sim
