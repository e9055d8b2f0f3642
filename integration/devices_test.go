package integration

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// gpuTask runs script asking milli-GPUs (a share of one device below 1000,
// whole devices in thousands), and prints the devices it was given.
func gpuTask(id string, milli int64, script string) protocol.TaskInfo {
	return framework.NewTask(protocol.TaskID(id), `echo "$ALLOT_GPUS $CUDA_VISIBLE_DEVICES $ALLOT_GPU_SHARES"; `+script).
		Shell().CPUs(100).Mem(32).Scalar(protocol.ResGPUs, milli).Build()
}

// gpuAgent starts a real agent with the GPU devices --devices would
// declare.
func gpuAgent(t *testing.T, c *testcluster.Cluster, devices string) *executors.Executor {
	models, err := executor.ParseDevices(devices)
	if err != nil {
		t.Fatal(err)
	}
	return executors.New(t, c, executors.Options{Configure: func(cfg *executor.Config) { cfg.Devices = models }})
}

// devicesSeen waits for a task's first line of output and returns the
// devices it names, and its shares.
func devicesSeen(t *testing.T, e *executors.Executor, f *sdkFramework, id string) (string, string) {
	t.Helper()
	var line string
	f.rec.WaitState(t, protocol.TaskID(id), protocol.TaskRunning)
	path := sandboxFile(e, sandboxOf(t, e, f.d.ID(), protocol.TaskID(id)), "stdout")
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		data, err := os.ReadFile(path)
		out := string(data)
		if err != nil || !strings.HasSuffix(out, "\n") {
			return fmt.Errorf("task %s printed %q so far", id, out)
		}
		line = strings.SplitN(out, "\n", 2)[0]
		return nil
	})
	fields := strings.Fields(line)
	if len(fields) != 3 || fields[0] != fields[1] {
		t.Fatalf("task %s saw ALLOT_GPUS, CUDA_VISIBLE_DEVICES, ALLOT_GPU_SHARES = %q", id, line)
	}
	return fields[0], fields[2]
}

// TestDevices_EndToEnd launches GPU tasks through a three-master cluster
// onto real agents with pretended devices: two half-device tasks share a
// device, a 600-milli task gets the other, an 8-device task gets 8 distinct
// devices, and an agent restart and a new leader keep every assignment
// (what the tasks hold, what the master records, and where the next task
// goes).
func TestDevices_EndToEnd(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	two := gpuAgent(t, c, "T4x2")
	eight := gpuAgent(t, c, "A100x8")
	if got := two.Agent().State(); got.Resources.Scalar(protocol.ResGPUs) != 2000 {
		t.Fatalf("agent with two GPUs declares %s", got.Resources)
	}
	f := startSDK(t, c, framework.WithName("gpus"))

	f.launch(t, two.ID(), gpuTask("half-a", 500, "sleep 1000"), gpuTask("half-b", 500, "sleep 1000"))
	a, sharesA := devicesSeen(t, two, f, "half-a")
	b, _ := devicesSeen(t, two, f, "half-b")
	if a != b || sharesA != a+":500" {
		t.Fatalf("two half-device tasks on devices %q and %q (shares %q), want one device", a, b, sharesA)
	}
	f.launch(t, two.ID(), gpuTask("more", 600, "sleep 1000"))
	m, _ := devicesSeen(t, two, f, "more")
	if m == a {
		t.Fatalf("a 600-milli task joined the full device %s", a)
	}

	f.launch(t, eight.ID(), gpuTask("all", 8000, "sleep 1000"))
	all, shares := devicesSeen(t, eight, f, "all")
	if ids := strings.Split(all, ","); len(ids) != 8 || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 8 {
		t.Fatalf("an 8-device task holds devices %q", all)
	}
	if strings.Count(shares, ":1000") != 8 {
		t.Fatalf("an 8-device task holds %q, want 1000 of each", shares)
	}

	// What the master recorded for each task, before the restart.
	recorded := func() map[protocol.TaskID]map[int]int64 {
		out := map[protocol.TaskID]map[int]int64{}
		for _, tk := range c.WaitForLeader().View().Tasks() {
			out[tk.ID] = tk.Info.Resources.GPUDevices()
		}
		return out
	}
	before := recorded()
	if len(before["half-a"]) != 1 || len(before["all"]) != 8 {
		t.Fatalf("the master recorded %v", before)
	}

	two.Stop()
	two.Start()
	for _, id := range []protocol.TaskID{"half-a", "half-b", "more"} {
		ts := waitAgentTask(t, two, f.d.ID(), id, protocol.TaskRunning)
		if got := ts.Resources.GPUDevices(); !maps.Equal(got, before[id]) {
			t.Errorf("after the restart the agent says %s holds %v, the master recorded %v", id, got, before[id])
		}
	}
	if after := recorded(); !maps.EqualFunc(after, before, maps.Equal) {
		t.Errorf("the master's record changed across the agent restart: %v, was %v", after, before)
	}
	// A new leader learns the devices from the replicated tasks.
	c.KillLeader()
	// 400 milli are left, on the 600-milli task's device: the next task
	// of 400 goes there, not onto the full device.
	f.launch(t, two.ID(), gpuTask("last", 400, "sleep 1000"))
	if got, shares := devicesSeen(t, two, f, "last"); got != m || shares != m+":400" {
		t.Fatalf("after the restart a 400-milli task got %q (%s), want device %s", got, shares, m)
	}
}
