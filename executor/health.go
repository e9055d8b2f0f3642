package executor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// Health checks (protocol.HealthCheck): while a task runs, the agent
// checks it every interval and reports the result in a RUNNING status
// update whenever it changes; after the configured number of failures in a
// row it kills the task (KILLED, task_unhealthy). Failures within the grace
// period after the start neither count nor are reported. Command checks run
// in the task's sandbox with its environment and as its user (both as the
// task started with them, so a reattached task is checked the same way),
// outside the task's limits.

// startHealthLocked starts checking t if it has a health check.
func (a *Agent) startHealthLocked(ctx context.Context, t *task) {
	if t.rec.Info.HealthCheck == nil || t.rt == nil {
		return
	}
	hc := t.rec.Info.HealthCheck.WithDefaults()
	c := healthChecker{hc: hc, dir: t.rt.Sandbox(), env: t.rt.Env(), user: t.rt.User()}
	a.wg.Add(1)
	go a.healthLoop(ctx, t, t.rt, c)
}

// healthLoop checks t until its process ends or the agent stops.
func (a *Agent) healthLoop(ctx context.Context, t *task, rt *runner.Task, c healthChecker) {
	defer a.wg.Done()
	started := time.Now()
	tick := time.NewTicker(c.hc.Interval)
	defer tick.Stop()
	fails := 0
	for {
		select {
		case <-rt.Done():
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := c.check(ctx)
		healthy := err == nil
		inGrace := time.Since(started) < c.hc.GracePeriod
		switch {
		case healthy:
			fails = 0
		case !inGrace:
			fails++
		}
		a.tasks.mu.Lock()
		if t.rec.State.Terminal() || t.abandoned {
			a.tasks.mu.Unlock()
			return
		}
		if t.rec.State == protocol.TaskRunning && !(inGrace && !healthy) && (t.healthy == nil || *t.healthy != healthy) {
			t.healthy = &healthy
			msg := ""
			if err != nil {
				msg = "health check failed: " + err.Error()
			}
			a.enqueueLocked(t, protocol.TaskRunning, "", msg, nil)
		}
		if !healthy && c.hc.ConsecutiveFailures > 0 && fails >= c.hc.ConsecutiveFailures && !t.rec.KillRequested {
			t.log.Info("killing an unhealthy task", "failures", fails, "error", err)
			a.killLocked(t, protocol.ReasonTaskUnhealthy, 0)
		}
		a.tasks.mu.Unlock()
	}
}

// healthChecker runs one task's check.
type healthChecker struct {
	hc   protocol.HealthCheck
	dir  string   // the task's sandbox
	env  []string // the task's environment
	user *runner.Credential
}

// check runs the check once; nil is healthy.
func (c healthChecker) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.hc.Timeout)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.hc.Port))
	switch c.hc.Type {
	case protocol.HealthCheckCommand:
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.hc.Command)
		cmd.Dir, cmd.Env = c.dir, c.env
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.user.Sys()}
		cmd.WaitDelay = time.Second // a child holding on does not hold the check
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("command timed out after %v", c.hc.Timeout)
			}
			return fmt.Errorf("command: %w", err)
		}
		return nil
	case protocol.HealthCheckHTTP:
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+c.hc.Path, nil)
		if err != nil {
			return err
		}
		hc := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s: %s", c.hc.Path, resp.Status)
		}
		return nil
	case protocol.HealthCheckTCP:
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return errors.New("unknown health check type " + string(c.hc.Type))
}
