// Package raftstore is allot's hashicorp/raft plumbing. It knows nothing about the
// cluster manager's domain: it replicates opaque commands and hands them, in log order,
// to an FSM that the caller implements.
//
// A Node bundles one Raft server with everything it needs:
//
//   - a durable log and stable store under DataDir/raft (raft-wal, or raft-boltdb v2
//     where the directory holds it or Config.LogStore asks), behind a small in-memory
//     log cache;
//   - a file snapshot store under DataDir/snapshots;
//   - a TCP transport bound to BindAddr and advertised as AdvertiseAddr;
//   - or, with Config.InMemory, in-memory stores and a transport attached to a shared
//     InmemNetwork, whose Disconnect, Partition and Heal let tests cut links;
//   - bootstrap of a new cluster from Config.Peers (a no-op when state exists on disk),
//     and Join/Remove for changing the membership of a running cluster;
//   - a leadership channel that never blocks Raft (LeaderChanges);
//   - Apply with group commit: concurrent callers' commands are packed, up to
//     Config.MaxBatch commands and Config.MaxBatchBytes bytes, into one Raft log entry,
//     so a burst of commands pays for one disk sync and one replication round trip
//     rather than one each.
//
// # What callers must do
//
// Implement FSM (see its contract: deterministic, one goroutine, snapshot ownership),
// build a Config from DefaultConfig, call New, and Shutdown when done. Only the leader
// accepts Apply, Join and Remove; the others return an error that matches ErrNotLeader
// and, through NotLeaderError, names the leader when one is known. After a node wins an
// election, call Barrier before serving reads of FSM state so that every entry of earlier
// terms has been applied.
//
// Every log entry written through Apply is a batch frame (see frame.go): a version byte,
// a command count and the length-prefixed commands. A frame that does not decode is a
// corrupt log, and the FSM goroutine panics rather than diverge from its peers.
package raftstore
