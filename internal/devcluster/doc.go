// Package devcluster runs a whole allot cluster in one process on this
// machine, for `allot dev`: one embedded NATS server, one or three masters
// replicating through Raft over TCP on loopback with their logs and
// snapshots on disk, and N agents (package executor) that run tasks as
// real processes, each with its own work directory, hostname
// (dev-agent-N), file server and attributes (rack, zone), so placement
// constraints mean something.
//
// Everything lives under Config.DataDir:
//
//	dev.json       the layout: masters (ID, Raft and HTTP addresses), the
//	               NATS address, agents (name, hostname, HTTP address,
//	               resources, attributes)
//	dev.lock       held while a cluster runs on the directory
//	masters/mN/    master N's Raft log, stable store and snapshots
//	agents/aN/     agent N's work directory: checkpoint and task sandboxes
//
// The layout is chosen on the first start and saved before anything
// starts; every later Start on the same directory uses the saved layout,
// whatever the Config says about masters, agents, ports and resources, so
// the masters find their Raft peers at the same addresses and recover from
// their logs and snapshots (the trio is bootstrapped only when no Raft
// state exists), and the agents reregister under their checkpointed IDs
// and reattach to their tasks.
//
// Close stops the agents first, then the masters, then NATS. Stopping an
// agent leaves its tasks running, exactly as stopping `allot agent` does:
// the next Start on the same directory reattaches to them, and reports
// the ones that ended meanwhile.
package devcluster
