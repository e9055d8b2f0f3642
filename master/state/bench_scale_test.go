package state

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// BenchmarkState_Scale builds the replicated state of a large cluster
// (agents, and tasks RUNNING on them, a hundred per launch, ten
// frameworks) and reports what it costs: the heap it holds (after a
// collection, per agent and per task), the snapshot's size, the time to
// write it, and the time a follower takes to restore it (the catch-up from
// a snapshot, less the transfer). One op is one snapshot and one restore.
func BenchmarkState_Scale(b *testing.B) {
	sizes := []struct{ agents, tasks int }{{10_000, 100_000}, {50_000, 1_000_000}}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, sz := range sizes {
		b.Run(fmt.Sprintf("agents=%d/tasks=%d", sz.agents, sz.tasks), func(b *testing.B) {
			before := heapInUse()
			h := bigState(b, sz.agents, sz.tasks)
			held := heapInUse() - before
			var snap bytes.Buffer
			var write, restore time.Duration
			for range b.N {
				snap.Reset()
				start := time.Now()
				if _, err := h.s.Snapshot().WriteTo(&snap); err != nil {
					b.Fatal(err)
				}
				write += time.Since(start)
				start = time.Now()
				restored, err := Restore(bytes.NewReader(snap.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				restore += time.Since(start)
				if got := len(restored.Snapshot().Tasks()); got != sz.tasks {
					b.Fatalf("restored %d tasks, want %d", got, sz.tasks)
				}
			}
			b.ReportMetric(float64(held)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(held)/float64(sz.tasks+sz.agents), "heap-B/object")
			b.ReportMetric(float64(snap.Len())/(1<<20), "snapshot-MiB")
			b.ReportMetric(write.Seconds()/float64(b.N), "write-s")
			b.ReportMetric(restore.Seconds()/float64(b.N), "restore-s")
		})
	}
}

// bigState registers agents and ten frameworks and launches tasks RUNNING
// on the agents round robin, a hundred per launch.
func bigState(b *testing.B, agents, tasks int) *harness {
	b.Helper()
	h := newHarness(b)
	for f := range 10 {
		h.must(CmdRegisterFramework, registerFramework(protocol.FrameworkID(fmt.Sprint("fw-", f))))
	}
	for a := range agents {
		h.must(CmdRegisterAgent, registerAgent(protocol.AgentID(fmt.Sprint("ag-", a))))
	}
	const per = 100
	for n := 0; n*per < tasks; n++ {
		ag := protocol.AgentID(fmt.Sprint("ag-", n%agents))
		fw := protocol.FrameworkID(fmt.Sprint("fw-", n%10))
		c := &LaunchTasks{FrameworkID: fw, AgentID: ag, Time: t0}
		u := &UpdateTaskStatus{Time: t0}
		for i := range min(per, tasks-n*per) {
			id := protocol.TaskID(fmt.Sprintf("t-%d-%d", n, i))
			c.Tasks = append(c.Tasks, taskInfo(id, ag))
			u.Updates = append(u.Updates, update(fw, id, ag, protocol.TaskRunning, protocol.StatusUUID(fmt.Sprint("u-", n, "-", i))))
		}
		h.must(CmdLaunchTasks, c)
		h.must(CmdUpdateTaskStatus, u)
	}
	return h
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
