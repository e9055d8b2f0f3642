// Package coflow is allot's coflow scheduler: the global coordinator that
// orders network transfers (MapReduce shuffles) across ports by coflow, with
// Philae (sampling-based size learning) as the default and Aalo, Varys
// (SEBF), shortest-coflow-first, FIFO and per-flow fair sharing (max-min,
// and the reference simulator's equal split) as
// baselines (docs/coflow.md). The master runs it for live shuffles and
// sim drives it with traces; both use the same code.
//
// The package is pure: a Coordinator takes events stamped with the caller's
// clock (Register, FlowCompleted, Progress, Deregister) and returns a
// Decision from Decide. It starts no goroutines, does no I/O, never reads the
// clock and is not safe for concurrent use. The same events at the same
// times always give the same decisions.
//
// # Decisions
//
// A Decision is a global priority order of Grants; each grant lets a list of
// one coflow's flows send, in order. A port's agent enforces the subsequence
// of flows leaving it (Decision.Egress). Rates turns a decision into
// piecewise-constant flow rates: highest grant first, each flow takes what
// its egress and ingress have left, so each port serves one flow at a time
// at line rate (the paper's simple scheme) and any port left idle goes to the
// next flow that can use it. sebf and fifo add per-flow MADD caps; fair asks
// for per-flow max-min fair rates instead, and fair-split for equal shares
// per port side (SplitRate).
//
// A decision is recomputed only on events (docs/coflow.md): for philae, a coflow
// arriving or finishing, a coflow's last pilot finishing and, for the
// contention policies C and D, a coflow's last flow at some port finishing;
// for aalo, an arrival, a finish or a demotion seen in a progress report;
// for the others, an arrival or a finish. The weighted rotation of the main
// queues is an event too: a decision carries NextChange, the end of the
// current slot block, and the caller asks again at that time. Between
// recomputations Decide returns the same *Decision and the caller re-runs
// Rates after each flow completion; Rates skips finished flows.
//
// # Driving it from a simulator
//
// Per event time t: deliver the events at t (completions, then arrivals, then
// progress reports), call Decide(t), call Rates(decision, capacity,
// coordinator), and advance the fluid model to the earliest of the next
// flow completion, the next arrival, decision.NextChange and, for aalo, the
// next report boundary (every Config.Slot). Report every unfinished flow's
// bytes sent at report boundaries for aalo, and before a Decide that
// recomputes (Stale) for sebf, fifo and scf (for exact remaining sizes);
// philae needs only completions (with Pilot set for pilots, see
// CoflowInfo.Pilots or the ClassPilot grants).
//
// # Determinism
//
// Ties are broken by stable keys: coflows by registration order (arrival),
// inside a main queue by philae's metric, then order of entry (Aalo's, and
// philae's with Config.QueueFIFO, by order of entry; for moves made by one
// recomputation, by registration order), the thin class by (contention,
// arrival), sebf by (Γ, arrival), scf by (size, arrival). Inside a coflow,
// flows go sender-major with senders and receivers in order of first
// appearance in the registered flow list. Pilot placement breaks load ties
// by the same first-appearance order.
package coflow
