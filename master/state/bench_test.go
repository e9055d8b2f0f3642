package state

import (
	"fmt"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// BenchmarkState_Apply measures one launch of 10 tasks plus one batch of
// 10 status updates, on a state that already holds about 100k tasks, with
// a Snapshot between commands as readers would take.
func BenchmarkState_Apply(b *testing.B) {
	h := newHarness(b)
	h.must(CmdRegisterFramework, registerFramework("fw-1"))
	for a := range 100 {
		h.must(CmdRegisterAgent, registerAgent(protocol.AgentID(fmt.Sprint("ag-", a))))
	}
	launchBatch := func(n int) ([]byte, []byte) {
		ag := protocol.AgentID(fmt.Sprint("ag-", n%100))
		c := &LaunchTasks{FrameworkID: "fw-1", AgentID: ag, Time: t0}
		u := &UpdateTaskStatus{Time: t0}
		for i := range 10 {
			id := protocol.TaskID(fmt.Sprintf("t-%d-%d", n, i))
			c.Tasks = append(c.Tasks, taskInfo(id, ag))
			u.Updates = append(u.Updates, update("fw-1", id, ag, protocol.TaskRunning, protocol.StatusUUID(fmt.Sprint("u-", n, "-", i))))
		}
		lc, _ := Encode(CmdLaunchTasks, c)
		uc, _ := Encode(CmdUpdateTaskStatus, u)
		return lc, uc
	}
	for n := range 10_000 {
		lc, uc := launchBatch(n)
		for _, cmd := range [][]byte{lc, uc} {
			h.index++
			if _, err := h.s.Apply(h.index, cmd); err != nil {
				b.Fatal(err)
			}
		}
	}
	cmds := make([][2][]byte, b.N)
	for i := range cmds {
		cmds[i][0], cmds[i][1] = launchBatch(10_000 + i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	index := h.index
	for i := range b.N {
		_ = h.s.Snapshot()
		index++
		if _, err := h.s.Apply(index, cmds[i][0]); err != nil {
			b.Fatal(err)
		}
		index++
		if _, err := h.s.Apply(index, cmds[i][1]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*10)/b.Elapsed().Seconds(), "tasks/s")
}
