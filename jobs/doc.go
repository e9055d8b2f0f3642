// Package jobs is what allot's job runner runs: job files (HCL, as Nomad
// writes them, with allot's constraint language), the jobs they describe
// (batch and service jobs, task groups with a count, restart policies,
// health checks, rolling updates, periodic schedules), their versions,
// and the planner that says what to launch and what to kill to bring what
// runs to what a job asks for. Parsing reports every error with its file,
// line and column. The planner is pure: jobs, what runs and the time in,
// decisions out; the runner (cmd/allot's `jobs` commands) does the I/O.
package jobs
