// Package master is allot's master daemon: it embeds (or connects to) the
// NATS servers frameworks and agents talk through, holds the cluster state
// in Raft, and, while it is the leader, serves the API and runs the
// allocation loop and the timers.
package master
