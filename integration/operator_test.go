package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
)

// postAction posts an operator action to the leader's HTTP API.
func postAction(t *testing.T, c *testcluster.Cluster, path string) {
	t.Helper()
	url := "http://" + c.WaitForLeader().HTTPAddr() + path
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d, want 200", path, resp.StatusCode)
	}
}

// offersMade scrapes a master's allot_offers_made_total.
func offersMade(t *testing.T, m *master.Master) float64 {
	t.Helper()
	n, err := scrapeMetric(m.HTTPAddr(), "allot_offers_made_total")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCluster_DrainSurvivesFailover: the leader elected after the one that
// drained the only agent offers nothing while a framework wants offers;
// activated, the agent is offered again and the framework launches there.
func TestCluster_DrainSurvivesFailover(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, Agents: 1})
	c.NewFramework(testcluster.FrameworkOptions{
		Name:       "drain",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: 1000}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.Finish(20 * time.Millisecond), Max: 1000},
	})
	ag := c.Agents()[0]
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := len(ag.Tasks()); n < 5 {
			return fmt.Errorf("launched %d tasks", n)
		}
		return nil
	})
	postAction(t, c, "/v1/agents/"+string(ag.ID())+"/drain")
	c.KillLeader()
	leader := c.WaitForLeader()
	if a, ok := leader.View().Agent(ag.ID()); !ok || a.State != "draining" {
		t.Fatalf("agent under the new leader: %+v, want draining", a)
	}
	// Rounds run every allocation interval; two seconds of them offer nothing.
	if err := testutil.Poll(2*time.Second, 50*time.Millisecond, func() error {
		if offersMade(t, leader) > 0 {
			return nil
		}
		return fmt.Errorf("no offer")
	}); err == nil {
		t.Fatal("the new leader offered the draining agent")
	}
	before := len(ag.Tasks())
	postAction(t, c, "/v1/agents/"+string(ag.ID())+"/activate")
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := len(ag.Tasks()); n <= before {
			return fmt.Errorf("no launch since activating (%d)", n)
		}
		return nil
	})
}

// putRoleLimit sets a role's quota limit through the leader's HTTP API.
func putRoleLimit(t *testing.T, c *testcluster.Cluster, role, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, "http://"+c.WaitForLeader().HTTPAddr()+"/v1/roles/"+role, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT role %s: %d, want 200", role, resp.StatusCode)
	}
}

// running counts the tasks an agent runs.
func running(ag *testcluster.TestAgent) int {
	n := 0
	for _, at := range ag.Tasks() {
		if !at.State.Terminal() {
			n++
		}
	}
	return n
}

// TestCluster_RoleLimitSurvivesFailover: a role limited to two CPUs runs
// two one-CPU tasks on an agent of more, under the leader that set the limit
// and under the next one.
func TestCluster_RoleLimitSurvivesFailover(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, Agents: 1, AgentResources: agentResources(8)})
	putRoleLimit(t, c, "eng/batch", `{"limit": {"cpus": 2000}}`)
	c.NewFramework(testcluster.FrameworkOptions{
		Name: "batch", Role: "eng/batch",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: 6}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.RunUntilKilled(), Max: 6},
	})
	ag := c.Agents()[0]
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := running(ag); n != 2 {
			return fmt.Errorf("running %d tasks, want 2", n)
		}
		return nil
	})
	c.KillLeader()
	c.WaitForLeader()
	if err := testutil.Poll(2*time.Second, 50*time.Millisecond, func() error {
		if n := running(ag); n > 2 {
			return nil
		}
		return fmt.Errorf("still 2")
	}); err == nil {
		t.Fatalf("the next leader let eng/batch run %d one-CPU tasks past its 2-CPU limit", running(ag))
	}
}
