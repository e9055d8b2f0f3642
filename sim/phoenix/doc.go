// Package phoenix simulates constraint-aware hybrid schedulers (Phoenix and
// its baselines Hawk-C, Eagle-C, Yaq-d and unconstrained Eagle) on
// synthetic Google-, Cloudera- and Yahoo-like traces, to measure job
// response times by job class as docs/phoenix.md ("Simulator") reports them.
//
// The model: one-slot workers with reservation queues, centralised
// least-work-left placement of long jobs on a big partition, batch probing
// with late binding for short jobs, Eagle's succinct state sharing and
// sticky batch probing, and Phoenix's CRV-based queue reordering and
// admission control on top. Constraints are evaluated as the master and
// agents evaluate them (protocol), and the CRV is kept with the allocator's
// class bookkeeping (offers). Everything is driven by one seeded event
// loop; nothing reads the wall clock.
//
// Run simulates one configuration; Compare runs several schedulers over
// seeds and reports factors against the first; RunExperiment runs one of
// the acceptance experiments; a Runner shares runs between them. WriteRun,
// WriteComparison and WriteExperiment print what `allot sim phoenix` shows.
package phoenix
