// Package altruism is the job-side half of Carbyne-style altruistic
// scheduling: for one DAG job it works out which tasks must start now for
// the job to finish by the time it would finish in its fair share, and how
// much of that share it can give back as leftover.
//
// A framework keeps one Job per DAG job. It feeds the job's events in
// (TaskStarted, TaskFinished, TaskFailed, ShareChanged, UpdateEstimate) and
// calls Planner.Plan after each of them. Plan returns a Decision:
//
//   - Completion, T_k: how long the job would take from now if it ran in a
//     constant share A_k, found by packing the remaining DAG forward into one
//     virtual bin of size A_k (machine boundaries ignored);
//   - MustStart: the runnable tasks whose latest start is now, found by packing
//     the reversed DAG backward from T_k so that work sits as late as it
//     safely can;
//   - Optional: the other runnable tasks, which may run early on leftover;
//   - every unstarted task's latest start and priority order;
//   - Leftover, L_k = A_k − running − must-start per resource, never negative;
//   - RemainingWork in task-seconds, and NextReplan, the time at which a
//     deferred task reaches its latest start (the plan timer).
//
// Decision.AddTo turns a Decision into the MustStart, Optional and Demand
// shapes and the RemainingWork of a protocol.DemandRequest.
//
// # Altruism and greed
//
// With probability P(altruism) (Config.Altruism) a plan is altruistic as
// above. Otherwise the job is greedy for that plan: the must-start set is
// every runnable task that fits in A_k − running, picked by alignment, and
// the rest stays optional. The randomness is an input: the caller passes a
// uniform draw in [0, 1) to every Plan, from its own seeded generator, so a
// plan is a pure function of the job, now and the draw. A job whose share is
// too small for one of its tasks has no finite T_k and is planned greedily.
//
// # Guarantee
//
// Every schedule Plan publishes is valid: no task starts before now or
// before its parent stages finish, the job finishes by T_k, and whenever a
// planned task runs, running and planned tasks together fit in the share.
// The reverse pack is a heuristic and can overrun T_k; such a schedule is
// rejected, and the plan falls back to the forward schedule pushed as late
// as it will go (right-justified). A job that starts its must-start tasks
// when told, and deferred ones no earlier than their latest start, therefore
// finishes by T_k while its share and estimates hold.
//
// Plan also remembers the schedule it returned. If that schedule is still
// feasible at the next plan, T_k never moves later than its deadline, even
// where a fresh forward pack from the new state would come out worse.
//
// # Units and determinism
//
// Resources are integer scalars (cpus in milli-CPU, mem in MiB, ...) and
// times are time.Duration, so the arithmetic of a plan is exact; floats are
// used only to rank candidates by alignment, with ties broken by longer
// duration, then by topological position. The package starts no goroutines,
// reads no clock and does no I/O. A Job and a Planner are not safe for
// concurrent use.
package altruism
