// Package dag runs DAG jobs on a framework.Driver with Carbyne-style
// altruism: each job finishes by the time it would in its fair share, and
// lends whatever it does not need before then to other frameworks as
// leftover.
//
// A Scheduler implements framework.Scheduler. Hand it to
// framework.NewDriver, run the driver, and Submit jobs: an
// altruism.JobSpec (stages of identical tasks, with barriers between
// them) plus a function that builds each task's command. Wait returns a
// job's Result: whether it succeeded, its completion time, and how many of
// its tasks ran on fair and on leftover offers.
//
//	s, _ := dag.New(dag.WithLogger(logger))
//	d, _ := framework.NewDriver(s, framework.WithNATSURLs(url))
//	go d.Run(ctx)
//	_ = s.Submit(ctx, dag.Job{ID: "etl", Spec: spec, Task: build})
//	res, err := s.Wait(ctx, "etl")
//
// # What it does
//
// Every job has its own altruism.Planner. The
// scheduler plans a job again whenever one of its tasks starts, finishes
// or fails, when the framework's fair share changes
// (Scheduler.ShareUpdate), and at the plan's NextReplan, when a deferred
// task reaches its latest start. After every plan it declares the summed
// plans of all its jobs with framework.Driver.DeclareDemand, replacing the
// previous report: the must-start tasks as MustStart (served by the fair
// H-DRF phase), the other runnable tasks as Optional (served only from the
// leftover pool, least remaining work first) and the jobs' RemainingWork.
// A framework with nothing runnable is suppressed.
//
// On fair offers it launches must-start tasks, most urgent first, and
// gives the rest to the leftover pool, so that other frameworks' optional
// work can use it: with DeclineLeftover when nothing fits, and otherwise
// as what the launch leaves unused, which returns to the agent the same
// way. On leftover offers it launches
// optional tasks, those closest to their latest start first (must-start
// tasks that found no fair room go before them). A task that fails, or is
// lost, runs again, up to WithMaxAttempts attempts; then its job fails
// and the job's running tasks are killed. Rerun runs a finished task
// again when its output was lost (a MapReduce map whose machine died):
// tasks of its child stages that have not started wait for it again.
//
// # Preemption
//
// The Scheduler implements framework.PreemptionHandler. Warned that the
// master will revoke some of its tasks that run on revocable (leftover)
// resources, it kills in place of each the running revocable task on the
// same agent, at least as large, that has run for the shortest time, if
// that is shorter than the warned task's: less work is lost, and the master
// withdraws the warning once it has the resources back. A task the master
// kills to preempt or revoke it or to drain its agent, and one the
// scheduler released, runs again without counting against WithMaxAttempts
// (Result.Preempted, Result.Released).
//
// # Shares
//
// The master sends the framework its fair share A (protocol.
// ShareUpdateEvent.FairShare: what static H-DRF gives it of the cluster
// over all the work it declared). The scheduler splits A among its jobs
// by DRF with demand caps (docs/carbyne.md): each job is capped at the summed
// demand of its unfinished tasks, and capacity no job can claim is spread
// over the jobs that use the resource, so that the jobs' shares add up to
// A. A job's share is its A_k for planning.
//
// Until a share arrives, and after an empty one (the master sends that
// when the framework had withdrawn its demand), the share is unknown and
// every job is planned greedily: all its runnable tasks are must-start,
// as a plain framework would declare them, and none is optional. The
// first fair offers then find more room than an altruistic plan uses;
// the scheduler launches the must-start set of its newest plan and
// declines the rest as leftover. WithGreedy keeps every job greedy
// whatever the share, which turns the scheduler into a plain DAG runner.
//
// # Time and concurrency
//
// Plans run on the scheduler's Clock (WithClock; the wall clock by
// default): a task counts as started when its launch is accepted, and its
// run time, which refines the stage's duration estimate, ends when its
// terminal status arrives. The scheduler's methods are safe for concurrent
// use. It serializes its work under one lock, which it holds while it
// talks to the master, so a driver callback, the plan timer and Submit
// wait for each other.
package dag
