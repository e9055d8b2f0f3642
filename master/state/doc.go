// Package state is the master's replicated data model: the role tree,
// agents, frameworks and tasks, changed only by commands that the Raft
// FSM applies in log order, with snapshot and restore.
//
// # Model
//
//   - Role: a configured node of the role tree (path, weight, optional
//     quota). Roles nobody configured are implicit, with weight 1.
//   - Agent: ID, hostname, HTTP address, total resources, attributes,
//     version, state (active, draining, unreachable, gone) and timestamps.
//   - Framework: ID, name, principal, role, weight, failover timeout,
//     capabilities, suppression, and connection state with DisconnectedAt,
//     so that a failover timeout survives a master failover.
//   - Task, keyed by (framework ID, task ID): agent, TaskInfo, offer kind,
//     state, the latest status with its UUID, and whether the framework
//     acknowledged it.
//
// Offers, decline filters, the leftover pool and demand are leader memory
// and are not here.
//
// # Task lifecycle
//
// LaunchTasks stores tasks STAGING; their initial status needs no
// acknowledgement. Every later status (UpdateTaskStatus from agents, or
// one the state generates: MarkAgentTasks, RemoveAgent, ReregisterAgent)
// replaces the latest status and is unacknowledged until the framework
// acknowledges its UUID (AcknowledgeStatus); UnackedTasks lists what the
// leader must (re)send, also after a failover. Terminal states are final.
// A terminal task stays until its terminal status is acknowledged, then
// it moves to its framework's completed history, which keeps the most
// recent MaxCompletedTasks per framework (View.CompletedTasks).
// RemoveFramework removes the framework's tasks whatever their state; the
// leader kills those still running. The framework, with its history and
// those tasks (the ones not yet terminal shown KILLED), moves to the
// completed frameworks, the most recent MaxCompletedFrameworks
// (View.CompletedFrameworks). The history is replicated like the rest,
// so it survives failovers and restarts; it is only shown, never acted
// on. ReregisterAgent reconciles the agent's report with the task
// table: unreported tasks become LOST (or DROPPED if still STAGING), and
// reported tasks the master does not know are returned as orphans to kill,
// never adopted (see ReregisterAgent).
//
// Statuses the state generates get the UUID "st-<index>-<n>", from the
// Raft index and a counter kept in the state, so they are the same on
// every replica.
//
// # Commands
//
// A command is one CmdType byte followed by the command struct in msgpack
// (Encode). Types are never renumbered; a type with IgnoreUnknownFlag set
// may be skipped by a State that does not know it. State.Apply is one
// switch over the type that calls one applyX per command. Each applyX
// decodes its body (a failure wraps ErrCorrupt: the log is corrupt and
// the FSM panics), validates it against the command's rules and the
// current state, and only then writes. A domain error wraps a protocol
// sentinel (ErrUnknownFramework, ErrUnknownAgent, ErrUnknownTask,
// ErrDuplicate, ErrInvalidArgument, ...) and is returned as the result of
// the Raft apply; the state is unchanged except for Index. The result of
// each command is documented on its struct.
//
// # Determinism
//
// Apply reads no clock and no randomness: the leader stamps times (Unix
// nanoseconds, the Time field of each command) and IDs into commands.
// Results are sorted and never depend on map order. The same command log
// therefore gives the same state, results and snapshot bytes on every
// replica.
//
// # Concurrency and copy-on-write
//
// Stored objects are immutable: Apply replaces an object instead of
// changing it, and the tables are persistent trees whose writes copy only
// the path to the changed key. State.Snapshot returns a View in O(1) that
// shares every object with the State and never changes afterwards; it is
// safe for concurrent use. Callers must not modify what a View returns.
// The allocator and the HTTP API work from Views; the leader re-validates
// decisions against the current state before committing them.
//
// # Snapshot format
//
// View.WriteTo writes a versioned, type-tagged stream: the magic
// "ALLOTSNP" and a uint16 format version; then records of one type byte,
// a uint32 body length and a msgpack body (roles, agents, frameworks,
// tasks, each sorted; then the completed history, in records flagged
// ignorable); then an end record with the counts, the Raft index and the
// UUID counter; then a CRC-32C of everything before it. Restore
// builds a fresh State from it and rejects unknown versions, truncated
// and corrupt streams with typed errors; it skips unknown record types
// only when they are flagged ignorable. State.RestoreFrom swaps a
// restored state in under the lock.
package state
