// Package testcluster is allot's one cluster helper: every
// multi-process test (integration/ and package tests) builds its cluster
// with New instead of starting servers by hand.
//
// New starts one embedded NATS server, N masters that replicate through
// Raft (in memory, or TCP on loopback) and point at that NATS server, and
// optionally M test agents; everything is stopped through t.Cleanup. The
// cluster offers WaitForLeader, Leader, KillLeader, Kill, Restart,
// Partition and Heal for fault tests.
//
// TestAgent and TestFramework are small protocol-level clients speaking the
// wire protocol (package protocol) over nats.go. They are not the framework
// SDK or the executor: they do exactly what a test needs and record
// everything they see, so tests can check invariants such as "no task was
// launched twice" and "every status update reached the framework". Both
// retry with capped, jittered backoff when no leader answers, agents
// re-register when the leader no longer knows them, and frameworks
// re-subscribe when a new leader announces itself.
//
// The test agents are package internal/simagent's agents (TestAgent is
// simagent.Agent, AgentOptions simagent.Options), which a load generator
// runs as well; NewAgent gives each its own connection and credential.
// They do not run processes: a task's behaviour (finish or fail after a
// delay, or run until killed) comes from its LabelBehaviour label or the
// agent's default, and the agent reports STARTING, RUNNING and the
// terminal state as reliable status updates, each kept and resent until
// the master's AckCommand for its UUID arrives.
//
// StartProcs runs a cluster of `allot master` and `allot agent` processes
// instead, for what only processes show: a master paused with SIGSTOP, a
// SIGKILL, the timeouts the binary ships.
//
// Helpers never sleep to synchronize: they poll with deadlines
// (internal/testutil) and must be called from the test's goroutine.
package testcluster
