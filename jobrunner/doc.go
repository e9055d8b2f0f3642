// Package jobrunner is allot's job runner: a framework like any other,
// built on the SDK, that runs the jobs of package jobs (batch jobs and
// services) for its principal. Jobs are submitted by writing them into the
// principal's store at the masters (Submit, as `allot jobs run` does);
// the runner reads them there, keeps their instances running through the
// planner of package jobs, and records there what it launched and what
// became of each job, so a runner restarted, or another one taking over,
// adopts what runs and launches nothing twice. It runs one framework per
// role its jobs name, so each role's jobs share the cluster under that
// role's weight and quota.
package jobrunner
