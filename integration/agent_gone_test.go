package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_MarkAgentGone: the operator marks an agent gone: the tasks
// there are LOST with reason agent_gone, the agent is gone for good (a
// second mark changes nothing, draining it is refused) and the allocator
// offers only the other agent; tasks elsewhere keep running.
func TestCluster_MarkAgentGone(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1, Agents: 2, AgentResources: agentResources(2)})
	fw := c.NewFramework(testcluster.FrameworkOptions{
		Name:       "svc",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: 4}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.RunUntilKilled(), Max: 4},
	})
	running := func() map[protocol.AgentID][]protocol.TaskID {
		out := map[protocol.AgentID][]protocol.TaskID{}
		for _, ft := range fw.Tasks() {
			if l, ok := ft.Last(); ok && l.State == protocol.TaskRunning {
				out[ft.Info.AgentID] = append(out[ft.Info.AgentID], ft.Info.TaskID)
			}
		}
		return out
	}
	gone, other := c.Agents()[0].ID(), c.Agents()[1].ID()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if r := running(); len(r[gone]) != 2 || len(r[other]) != 2 {
			return fmt.Errorf("running %v, want two tasks on each agent", r)
		}
		return nil
	})
	before := running()

	cl, err := api.NewClient([]string{c.WaitForLeader().HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st, err := cl.MarkAgentGone(ctx, gone); err != nil || st.State != string(state.AgentGone) {
		t.Fatalf("mark gone: %+v, %v", st, err)
	}
	for _, id := range before[gone] {
		fw.WaitState(id, protocol.TaskLost)
		ft, _ := fw.Task(id)
		if l, _ := ft.Last(); l.State != protocol.TaskLost || l.Reason != protocol.ReasonAgentGone {
			t.Fatalf("%s: %+v, want LOST agent_gone", id, l)
		}
	}
	if r := running(); len(r[other]) != 2 {
		t.Fatalf("running after the mark %v: the other agent's tasks should run on", r)
	}
	if st, err := cl.MarkAgentGone(ctx, gone); err != nil || st.State != string(state.AgentGone) {
		t.Fatalf("mark gone again: %+v, %v", st, err)
	}
	if _, err := cl.DrainAgent(ctx, gone); !errors.Is(err, api.ErrConflict) {
		t.Fatalf("drain a gone agent: %v, want ErrConflict", err)
	}
	if _, err := cl.MarkAgentGone(ctx, "ag-NOSUCHAGENT"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("mark an unknown agent gone: %v, want ErrNotFound", err)
	}
	ex, err := cl.Explain(ctx, fw.ID())
	if err != nil || ex.Agents != 1 {
		t.Fatalf("explain: %+v, %v; want the allocator to know one agent", ex, err)
	}
}
