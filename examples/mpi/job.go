package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

// job is one `mpi run`: the driver, the gang and the report.
type job struct {
	cfg    runConfig
	out    io.Writer
	logger hclog.Logger
	d      *framework.Driver
	gang   *framework.Gang
	sched  *scheduler
	tasks  []protocol.TaskInfo
	start  time.Time

	stopped chan struct{} // closed when the driver's Run returned
	runErr  error         // what it returned
}

// errRunTimeout ends a run that passed --timeout.
var errRunTimeout = errors.New("the run's deadline (--timeout) passed")

// run runs the framework until the ranks are done and checked, or the
// gang cannot be placed, or the deadline passes; it always tears the
// framework down before it returns, so nothing of it is left running.
func run(ctx context.Context, cfg runConfig, self string, out io.Writer, logger hclog.Logger) int {
	j := &job{cfg: cfg, out: out, logger: logger, start: time.Now(), tasks: cfg.rankTasks(self),
		stopped: make(chan struct{})}
	j.sched = newScheduler(cfg.ranks, logger)
	opts := []framework.Option{framework.WithNATSURLs(cfg.nats...), framework.WithName(cfg.name),
		framework.WithLogger(logger), framework.WithCapabilities(protocol.CapGang)}
	opts = append(opts, framework.CredentialsFromEnv()...)
	if cfg.role != "" {
		opts = append(opts, framework.WithRole(cfg.role))
	}
	var err error
	if j.d, err = framework.NewDriver(j.sched, opts...); err == nil {
		j.gang, err = framework.NewGang(j.d, framework.GangSpec{
			GroupID: "mpi", Tasks: j.tasks, Ports: 1, Constraints: cfg.constraints(),
			Timeout: cfg.deadline, Attempts: 1, Refuse: refuseAcquiring, Prepare: j.sched.prepare,
		})
	}
	if err != nil {
		fmt.Fprintf(out, "mpi: %v\n", err)
		return exitFailed
	}
	j.sched.gang = j.gang
	fmt.Fprintf(out, "mpi: %d ranks, %s; vector of %d, pi with %d intervals; placement deadline %s\n",
		cfg.ranks, cfg.describe(), cfg.vectorLen, cfg.intervals, cfg.deadline)

	// The driver runs until the framework is torn down; ctx bounds the
	// run's steps, not the teardown.
	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRun()
	go func() {
		defer close(j.stopped)
		j.runErr = j.d.Run(runCtx)
	}()
	stepCtx, cancel := context.WithTimeoutCause(ctx, cfg.timeout, errRunTimeout)
	defer cancel()

	code := j.steps(stepCtx)
	j.teardown(cancelRun)
	fmt.Fprintf(out, "mpi: done in %.2fs, exit status %d\n", time.Since(j.start).Seconds(), code)
	return code
}

// steps subscribes, places and launches the gang, waits for the ranks and
// checks their results.
func (j *job) steps(ctx context.Context) int {
	subscribe, cancel := context.WithTimeoutCause(ctx, j.cfg.deadline,
		fmt.Errorf("no master answered within %s at %v", j.cfg.deadline, j.cfg.nats))
	defer cancel()
	select {
	case <-j.d.Ready():
	case <-j.stopped:
		fmt.Fprintf(j.out, "mpi: the framework could not subscribe: %v\n", j.runErr)
		return exitFailed
	case <-subscribe.Done():
		fmt.Fprintf(j.out, "mpi: the framework could not subscribe: %v\n", context.Cause(subscribe))
		return exitFailed
	}
	fmt.Fprintf(j.out, "mpi: framework %s subscribed; placing the gang\n", j.d.ID())

	select {
	case <-j.gang.Done():
	case <-j.sched.trouble:
		fmt.Fprintf(j.out, "mpi: %v\n", j.sched.err())
		return exitFailed
	case <-ctx.Done():
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		j.gang.Cancel(cctx) // releases what it holds
		cancel()
		fmt.Fprintf(j.out, "mpi: the gang was not placed: %v\n", context.Cause(ctx))
		return exitFailed
	}
	j.quiet(ctx)
	if err := j.gang.Err(); err != nil {
		j.explainGang(err)
		return exitFailed
	}
	j.printPlacement()

	select {
	case <-j.sched.ended:
	case <-j.sched.trouble:
		fmt.Fprintf(j.out, "mpi: %v\n", j.sched.err())
		j.printRanks(ctx)
		return exitFailed
	case <-ctx.Done():
		fmt.Fprintf(j.out, "mpi: the ranks did not finish: %v\n", context.Cause(ctx))
		j.printRanks(ctx)
		return exitFailed
	}
	if !j.allFinished() {
		fmt.Fprintln(j.out, "mpi: a rank failed")
		j.printRanks(ctx)
		return exitFailed
	}
	fmt.Fprintf(j.out, "mpi: all %d ranks FINISHED after %.2fs\n", j.cfg.ranks, time.Since(j.start).Seconds())
	return j.verify(ctx)
}

// quiet stops the offers once the gang is done: without a demand the
// framework would be offered whatever is free.
func (j *job) quiet(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := j.d.Suppress(qctx); err != nil {
		j.logger.Warn("suppress offers", "error", err)
	}
}

func (j *job) allFinished() bool {
	for _, st := range j.sched.statuses() {
		if st.State != protocol.TaskFinished {
			return false
		}
	}
	return true
}

// teardown removes the framework, which kills whatever of it still
// runs, and waits for the driver to stop; both bounded.
func (j *job) teardown(cancelRun context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if j.subscribed() {
		if err := j.d.Teardown(ctx); err != nil {
			fmt.Fprintf(j.out, "mpi: teardown: %v\n", err)
		} else {
			fmt.Fprintln(j.out, "mpi: framework torn down: nothing of it runs or holds offers any more")
		}
	}
	cancelRun()
	select {
	case <-j.stopped:
		if j.runErr != nil {
			j.logger.Warn("driver stopped", "error", j.runErr)
		}
	case <-ctx.Done():
		fmt.Fprintln(j.out, "mpi: the driver did not stop in time")
	}
}

// subscribed reports whether the driver subscribed and still runs: only
// then is there a framework to tear down.
func (j *job) subscribed() bool {
	select {
	case <-j.stopped:
		return false
	default:
	}
	select {
	case <-j.d.Ready():
		return true
	default:
		return false
	}
}
