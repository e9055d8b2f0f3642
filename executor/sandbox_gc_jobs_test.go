//go:build linux

package executor

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestAgent_SandboxesStayUnderBudgetAcrossJobs: an agent's work directory
// stays under its configured budget across many jobs, each a framework
// whose tasks write files and that is shut down once they finished, as
// the MapReduce example's jobs are: after each job the sandboxes take at
// most the budget and that job's output, and at the end at most the
// budget. It runs 20 jobs, and 100 with ALLOT_LONG=1 (about 15 s under
// the race detector on two cores).
func TestAgent_SandboxesStayUnderBudgetAcrossJobs(t *testing.T) {
	t.Parallel()
	jobs := 20
	if os.Getenv("ALLOT_LONG") != "" {
		jobs = 100
	}
	const (
		tasksPerJob = 2
		written     = 200_000
		budget      = 2 << 20
	)
	m, a := gcAgent(t, func(c *Config) { c.GCDelay, c.GCInterval, c.GCDiskBudget = time.Hour, time.Hour, budget })
	var jobOutput int64
	for j := range jobs {
		fw := protocol.FrameworkID("fw-job" + strconv.Itoa(j))
		var tasks []protocol.TaskInfo
		for i := range tasksPerJob {
			tasks = append(tasks, writeTask("t"+strconv.Itoa(i), written))
		}
		before := sandboxesSize(t, a.Agent)
		runTasks(t, m, a, fw, tasks...)
		if j == 0 {
			// What one job leaves, as the disk counts it (blocks,
			// directories).
			jobOutput = sandboxesSize(t, a.Agent) - before
			if jobOutput < tasksPerJob*written {
				t.Fatalf("one job takes %d bytes, want at least what it wrote", jobOutput)
			}
		}
		testutilWaitFor(t, func() error {
			if n := sandboxesSize(t, a.Agent); n > budget+jobOutput {
				return fmt.Errorf("after job %d the sandboxes take %d bytes, want at most %d (budget) + %d (this job)",
					j, n, budget, jobOutput)
			}
			return nil
		})
		m.shutdown(t, a.ID(), fw)
	}
	testutilWaitFor(t, func() error {
		if n := sandboxesSize(t, a.Agent); n > budget {
			return fmt.Errorf("the sandboxes take %d bytes at the end, want at most the budget %d", n, budget)
		}
		return nil
	})
	if s := a.gc.snapshot(); s.removed[gcReasonPressure] == 0 || s.removed[gcReasonDelay] != 0 {
		t.Fatalf("removals %v, want some for the budget and none for the delay (an hour)", s.removed)
	}
}
