package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_HDRFAcrossRoles: two
// frameworks in roles weighted 2:1 share a three-master cluster's two
// agents by H-DRF, launch unit tasks on their offers, see each task
// RUNNING then FINISHED, and acknowledge every update; no task runs twice,
// and the replicated state agrees.
func TestCluster_HDRFAcrossRoles(t *testing.T) {
	t.Parallel()
	const (
		agentCPUs = 6
		perFw     = 20 // tasks each framework runs in all
		engWeight = 2.0
		adsWeight = 1.0
	)
	c := testcluster.New(t, testcluster.Options{
		Masters: 3,
		Roles:   map[string]float64{"eng": engWeight, "ads": adsWeight},
	})
	newFw := func(role string) *testcluster.TestFramework {
		return c.NewFramework(testcluster.FrameworkOptions{
			Name:       role,
			Role:       role,
			Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: perFw}},
			AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.Finish(20 * time.Millisecond), Max: perFw},
		})
	}
	eng, ads := newFw("eng"), newFw("ads")
	// Agents join after both frameworks declared demand, and hold their
	// tasks RUNNING until released, so the split of a full cluster can be
	// read off at rest.
	term := raftTerm(c)
	for range 2 {
		c.NewAgent(testcluster.AgentOptions{Resources: agentResources(agentCPUs), Held: true})
	}
	agents := c.Agents()

	totalTasks := int64(2 * agentCPUs) // unit tasks that fit the cluster
	wantEng := float64(totalTasks) * engWeight / (engWeight + adsWeight)
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		run := runningCPUs(agents)
		if sum := run[eng.ID()] + run[ads.ID()]; sum != totalTasks*1000 {
			return fmt.Errorf("cluster runs %d milli-CPUs (eng %d, ads %d), want %d",
				sum, run[eng.ID()], run[ads.ID()], totalTasks*1000)
		}
		return nil
	})
	run := runningCPUs(agents)
	gotEng, gotAds := float64(run[eng.ID()])/1000, float64(run[ads.ID()])/1000
	switch diff := gotEng - wantEng; {
	case raftTerm(c) != term:
		// A new leader (even the same node re-elected) starts without the
		// frameworks' demand and offers whole agents until they declare it
		// again, so the split says nothing about H-DRF. Only an overloaded
		// machine elects again here.
		t.Logf("leadership changed while the cluster filled (term %s to %s): split eng %v / ads %v not checked",
			term, raftTerm(c), gotEng, gotAds)
	case diff > 1 || diff < -1:
		t.Errorf("full cluster: eng runs %v CPUs and ads %v, want eng %v ± 1 (weights %v:%v)",
			gotEng, gotAds, wantEng, engWeight, adsWeight)
	}

	// The leader's replicated state holds exactly the tasks the agents run,
	// on the same agents, and both frameworks in their roles.
	checkStateMatchesAgents(t, c, agents, run, eng, ads)

	// Release: every task finishes, the rest of the demand runs, and every
	// update is acknowledged, after which the tasks leave the state.
	for _, a := range agents {
		a.Release()
	}
	waitAllAcknowledged(t, c, agents, perFw, eng, ads)
	if doc := httpState(t, c); len(doc.Tasks) != 0 || len(doc.Frameworks) != 2 {
		t.Errorf("GET /v1/state at the end: %d tasks and %d frameworks, want 0 and 2", len(doc.Tasks), len(doc.Frameworks))
	}
	checkLifecycle(t, eng)
	checkLifecycle(t, ads)
	all := checkNoDuplicateLaunch(t, agents)
	if got, want := len(all), 2*perFw; got != want {
		t.Errorf("agents launched %d tasks, want %d", got, want)
	}
	for _, a := range agents {
		if r := a.Refused(); len(r) > 0 {
			t.Errorf("agent %s: master refused updates %+v", a.Hostname(), r)
		}
	}
}

// waitAllAcknowledged waits until each framework of fws has finished
// perFw tasks with every update acknowledged, by it and to the agents,
// and the leader's state holds no task.
func waitAllAcknowledged(t *testing.T, c *testcluster.Cluster, agents []*testcluster.TestAgent, perFw int, fws ...*testcluster.TestFramework) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, fw := range fws {
			if n := finished(fw); n != perFw {
				return fmt.Errorf("%s: %d tasks finished, want %d; unfinished (launched %d): %v",
					fw.Name(), n, perFw, fw.Launched(), unfinished(fw))
			}
			if n := fw.PendingAcks(); n > 0 {
				return fmt.Errorf("%s: %d acknowledgements pending", fw.Name(), n)
			}
		}
		for _, a := range agents {
			if n := a.Pending(); n > 0 {
				return fmt.Errorf("agent %s: %d status updates not acknowledged", a.Hostname(), n)
			}
		}
		l := c.Leader()
		if l == nil {
			return fmt.Errorf("no leader serves")
		}
		if n := l.View().NumTasks(); n != 0 {
			return fmt.Errorf("leader state still holds %d tasks", n)
		}
		return nil
	})
}

// checkStateMatchesAgents checks that the leader's replicated state and
// its operator API (GET /v1/state) hold exactly the tasks the agents run,
// on the same agents, both frameworks in their roles, and role
// allocations equal to the milli-CPUs run gives for eng and ads.
func checkStateMatchesAgents(t *testing.T, c *testcluster.Cluster, agents []*testcluster.TestAgent,
	run map[protocol.FrameworkID]int64, eng, ads *testcluster.TestFramework) {
	t.Helper()
	leader := c.WaitForLeader()
	view := leader.View()
	for _, fw := range []*testcluster.TestFramework{eng, ads} {
		f, ok := view.Framework(fw.ID())
		if !ok || f.Role != fw.Role() {
			t.Errorf("leader state: framework %s = %+v, want role %s", fw.ID(), f, fw.Role())
		}
	}
	agentTasks := checkNoDuplicateLaunch(t, agents)
	if got, want := view.NumTasks(), len(agentTasks); got != want {
		t.Errorf("leader state holds %d tasks, agents run %d", got, want)
	}
	for k, at := range agentTasks {
		vt, ok := view.Task(k.FrameworkID, k.TaskID)
		if !ok || vt.AgentID != at.Info.AgentID || vt.Terminal() {
			t.Errorf("leader state: task %s = %+v, want live on %s", k, vt, at.Info.AgentID)
		}
	}
	// So does the operator API, which also shows the roles' allocations.
	doc := httpState(t, c)
	roles := map[protocol.FrameworkID]string{}
	for _, f := range doc.Frameworks {
		roles[f.ID] = f.Role
	}
	for _, fw := range []*testcluster.TestFramework{eng, ads} {
		if roles[fw.ID()] != fw.Role() {
			t.Errorf("GET /v1/state: framework %s has role %q, want %q", fw.ID(), roles[fw.ID()], fw.Role())
		}
	}
	if len(doc.Tasks) != len(agentTasks) {
		t.Errorf("GET /v1/state lists %d tasks, agents run %d", len(doc.Tasks), len(agentTasks))
	}
	for _, dt := range doc.Tasks {
		at, ok := agentTasks[testcluster.TaskKey{FrameworkID: dt.FrameworkID, TaskID: dt.TaskID}]
		if !ok || at.Info.AgentID != dt.AgentID || dt.State.Terminal() {
			t.Errorf("GET /v1/state: task %s/%s on %s is %s; agents run it: %v", dt.FrameworkID, dt.TaskID, dt.AgentID, dt.State, ok)
		}
	}
	alloc := map[string]int64{}
	for _, r := range doc.Roles {
		alloc[r.Path] = r.Allocation.Scalar(protocol.ResCPUs)
	}
	if alloc["eng"] != run[eng.ID()] || alloc["ads"] != run[ads.ID()] {
		t.Errorf("GET /v1/state: role allocations %v milli-CPUs, agents run eng %d and ads %d",
			alloc, run[eng.ID()], run[ads.ID()])
	}
}
