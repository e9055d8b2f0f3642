// Package coflowsim replays Coflow-Benchmark traces on a non-blocking
// fabric, flow by flow, through the coordinator a cluster runs (package
// coflow), to compare Philae with its baselines (Aalo, Varys' SEBF, SCF,
// FIFO, per-flow fair sharing) by coflow completion times and by the
// coordinator's load, as docs/coflow.md reports them.
//
// ParseTrace and WriteTrace read and write the trace format; FilterSkew,
// WideOnly, Replicate, MantriLike and Synthesize derive the traces the
// experiments use. Run replays one trace under one policy; Compare and
// Sweep run several policies (over a knob's values) and report factors
// against the first; WriteRun and WriteComparison print what `allot sim
// coflow` shows.
package coflowsim
