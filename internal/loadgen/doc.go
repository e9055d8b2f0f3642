// Package loadgen measures the master at scale as a user would run it:
// it starts a trio of `allot master` processes with the defaults allot
// ships, connects thousands of simulated agents (internal/simagent: each
// a NATS client of its own that registers, heartbeats, follows launch and
// kill commands and reports the task states a real agent would, running
// nothing), and frameworks that keep the cluster busy; then it measures
// steady state and leader kills (`allot bench load`). docs/benchmarks.md
// records what it printed.
package loadgen
