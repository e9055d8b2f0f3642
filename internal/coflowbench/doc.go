// Package coflowbench is `allot bench coflow`, the coflow testbed: for
// each policy it starts a local cluster (internal/devcluster) whose
// agents' shuffle egress is capped, makes each agent hold a file to serve,
// and replays a trace folded onto the agents (sim/coflowsim.Fold) as real
// HTTP downloads between them, each coflow registered with the leader's
// coflow scheduler (or, uncoordinated, not). It measures every coflow's
// completion time and puts the simulator's prediction for the same trace
// beside it (docs/coflow.md, "Testbed").
package coflowbench
