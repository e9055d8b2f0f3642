// Package simagent is a lightweight agent that speaks the agent protocol
// (package protocol) over NATS and runs its tasks in memory, for tests and
// load generation.
//
// An Agent registers with the leading master, heartbeats (re-registering
// with its tasks when the leader no longer knows it), follows
// LaunchCommand, KillCommand, ShutdownFrameworkCommand and AckCommand, and
// reports STARTING, RUNNING and the terminal state of every task as
// reliable status updates, each kept and resent until the master
// acknowledges its UUID. It runs no processes: a task's Behaviour (finish
// or fail after a delay, or run until killed) comes from its
// LabelBehaviour label or the agent's default. It records every launch it
// receives and every update it sends, so tests can check invariants such
// as "no task was launched twice".
//
// internal/testcluster starts its test agents with this package.
package simagent
