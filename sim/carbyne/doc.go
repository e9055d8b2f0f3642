// Package carbyne simulates a cluster running DAG jobs under Carbyne and
// its baselines (strict and work-conserving DRF, Tetris-like packing,
// shortest job first), discrete event by event, to measure job completion
// times, makespan and fairness the way docs/carbyne.md reports them.
//
// It drives the code a cluster runs rather than a model of it: an
// offers.Allocator makes every offer, and under the carbyne scheduler every
// job is planned by framework/altruism. The simulator only plays the
// frameworks' part (declare, accept, decline) and the agents' (tasks end).
//
// Run plays one workload under one scheduler; Compare and Sweep run several
// schedulers over seeds (and a knob's values) and report factors against
// the first; WriteRun and WriteComparison print what `allot sim carbyne`
// shows.
package carbyne
