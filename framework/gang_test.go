package framework_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// gangScheduler starts a gang once registered and feeds it every offer;
// it declines what the gang returns.
type gangScheduler struct {
	sdktest.Recorder
	mu   sync.Mutex
	gang *framework.Gang
	errs []error
}

func (s *gangScheduler) Registered(d *framework.Driver, id protocol.FrameworkID) {
	s.Recorder.Registered(d, id)
	if err := s.gang.Start(context.Background()); err != nil {
		s.fail(err)
	}
}

func (s *gangScheduler) Offers(d *framework.Driver, offers []protocol.Offer) {
	s.Recorder.Offers(d, offers)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	rest, err := s.gang.Offer(ctx, offers)
	if err != nil {
		s.fail(err)
	}
	if len(rest) > 0 {
		if err := d.Decline(ctx, placement.OfferIDs(rest), framework.NoFilter); err != nil {
			s.fail(err)
		}
	}
}

func (s *gangScheduler) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *gangScheduler) failures() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// startGang runs a driver whose scheduler runs one gang.
func startGang(t *testing.T, c *testcluster.Cluster, spec framework.GangSpec, opts ...framework.Option) (*gangScheduler, *running) {
	t.Helper()
	s := &gangScheduler{Recorder: sdktest.Recorder{Timeout: wait}}
	d := prepare(t, c, s, opts...)
	g, err := framework.NewGang(d, spec)
	if err != nil {
		t.Fatal(err)
	}
	s.gang = g
	return s, run(t, d)
}

func rackCluster(t *testing.T, agents int) *testcluster.Cluster {
	return testcluster.New(t, testcluster.Options{Agents: agents, AgentAttributes: func(i int) protocol.Attributes {
		return protocol.Attributes{"rack": protocol.Text(fmt.Sprint("r", i))}
	}})
}

func gangTasks(prefix string, n int, r protocol.Resources, b testcluster.Behaviour) []protocol.TaskInfo {
	out := make([]protocol.TaskInfo, n)
	for i := range out {
		out[i] = task(fmt.Sprintf("%s-%d", prefix, i), r, b)
	}
	return out
}

func waitGang(t *testing.T, g *framework.Gang) error {
	t.Helper()
	select {
	case <-g.Done():
		return g.Err()
	case <-time.After(wait):
		t.Fatalf("gang not done (attempt %d, holding %d offers)", g.Attempt(), g.Held())
		return nil
	}
}

func TestGang_UniqueRack(t *testing.T) {
	c := rackCluster(t, 3)
	s, r := startGang(t, c, framework.GangSpec{
		GroupID:     "mpi-1",
		Tasks:       gangTasks("rank", 3, unit(), testcluster.RunUntilKilled()),
		Constraints: []protocol.Constraint{uniqueRack},
		Timeout:     5 * time.Second,
	})
	if err := waitGang(t, s.gang); err != nil {
		t.Fatal(err)
	}
	for _, ti := range s.gang.Tasks() {
		s.WaitState(t, ti.TaskID, protocol.TaskRunning)
	}
	// One task per agent, each launched as a group of one, at once.
	for _, a := range c.Agents() {
		ts := a.Tasks()
		if len(ts) != 1 || ts[0].Info.GroupID != "mpi-1" || ts[0].Launches != 1 {
			t.Fatalf("agent %s runs %+v", a.Hostname(), ts)
		}
	}
	if errs := s.failures(); len(errs) > 0 {
		t.Fatal(errs)
	}
	// The gang launched everything it held and withdrew its demand, as the
	// leader sees it. (The framework, undeclared again, may be offered what
	// is left on the agents at the next round, or once the refuse filter of
	// offers the gang released ends: whether it is depends on how the
	// rounds fell, so it is not asserted.)
	if n := s.gang.Held(); n != 0 {
		t.Fatalf("gang holds %d offers after it launched", n)
	}
	explain := "http://" + c.HTTPAddrs()[0] + "/v1/frameworks/" + string(r.d.ID()) + "/explain"
	testutil.WaitFor(t, wait, 10*time.Millisecond, func() error {
		resp, err := http.Get(explain)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var ex struct {
			Declared bool `json:"declared"`
			Shapes   any  `json:"shapes"`
		}
		switch {
		case resp.StatusCode != http.StatusOK:
			return fmt.Errorf("GET %s: %s", explain, resp.Status)
		case json.NewDecoder(resp.Body).Decode(&ex) != nil:
			return fmt.Errorf("GET %s: not an explanation", explain)
		case ex.Declared:
			return fmt.Errorf("the framework still declares demand after the gang launched: %v", ex.Shapes)
		}
		return nil
	})
}

func TestGang_TimeoutReleasesOffers(t *testing.T) {
	c := rackCluster(t, 3)
	s, r := startGang(t, c, framework.GangSpec{
		GroupID:     "too-big",
		Tasks:       gangTasks("rank", 4, unit(), testcluster.RunUntilKilled()),
		Constraints: []protocol.Constraint{uniqueRack},
		Timeout:     400 * time.Millisecond,
		Refuse:      5 * time.Second,
	})
	// It gathers an offer from every agent, finds no placement for four
	// tasks on three racks, and lets them go.
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if n := s.gang.Held(); n < 3 && s.gang.Err() == nil {
			return fmt.Errorf("gang holds %d offers", n)
		}
		return nil
	})
	err := waitGang(t, s.gang)
	if !errors.Is(err, framework.ErrGangTimeout) {
		t.Fatalf("gang: %v, want ErrGangTimeout", err)
	}
	if s.gang.Held() != 0 || len(r.d.Offers()) != 0 {
		t.Fatalf("still held: gang %d, driver %v", s.gang.Held(), r.d.Offers())
	}
	// Another framework now gets every agent, whole.
	other := newRecorder()
	start(t, c, other)
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		agents := map[protocol.AgentID]bool{}
		for _, o := range other.OffersSince(0) {
			if o.Resources.Equal(testcluster.DefaultAgentResources()) {
				agents[o.AgentID] = true
			}
		}
		if len(agents) < 3 {
			return fmt.Errorf("other framework offered %d agents", len(agents))
		}
		return nil
	})
	for _, a := range c.Agents() {
		if n := len(a.Tasks()); n != 0 {
			t.Fatalf("agent %s runs %d tasks", a.Hostname(), n)
		}
	}
}

func TestGang_CompetingGangsBothComplete(t *testing.T) {
	c := rackCluster(t, 3)
	whole := testcluster.DefaultAgentResources() // each task needs a whole agent
	spec := func(name string) framework.GangSpec {
		return framework.GangSpec{
			GroupID:     name,
			Tasks:       gangTasks(name, 3, whole, testcluster.Finish(150*time.Millisecond)),
			Constraints: []protocol.Constraint{uniqueRack},
			Timeout:     400 * time.Millisecond,
			Refuse:      100 * time.Millisecond,
			Attempts:    -1,
		}
	}
	s1, _ := startGang(t, c, spec("g1"), framework.WithName("g1"))
	s2, _ := startGang(t, c, spec("g2"), framework.WithName("g2"))
	for _, s := range []*gangScheduler{s1, s2} {
		if err := waitGang(t, s.gang); err != nil {
			t.Fatal(err)
		}
		for _, ti := range s.gang.Tasks() {
			s.WaitState(t, ti.TaskID, protocol.TaskFinished)
		}
		if errs := s.failures(); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	// Each agent ran one task of each gang, one after the other.
	for _, a := range c.Agents() {
		ts := a.Tasks()
		if len(ts) != 2 || ts[0].Info.GroupID == ts[1].Info.GroupID {
			t.Fatalf("agent %s ran %+v", a.Hostname(), ts)
		}
	}
	t.Logf("attempts: g1 %d, g2 %d", s1.gang.Attempt(), s2.gang.Attempt())
}

func TestGang_InvalidSpec(t *testing.T) {
	d, err := framework.NewDriver(framework.NopScheduler{})
	if err != nil {
		t.Fatal(err)
	}
	ok := gangTasks("t", 1, unit(), testcluster.RunUntilKilled())
	for name, spec := range map[string]framework.GangSpec{
		"no group id":    {Tasks: ok},
		"no tasks":       {GroupID: "g"},
		"duplicate task": {GroupID: "g", Tasks: append(ok, ok...)},
		"bad constraint": {GroupID: "g", Tasks: ok, Constraints: []protocol.Constraint{{Attribute: "rack", Op: "??"}}},
		"no resources":   {GroupID: "g", Tasks: []protocol.TaskInfo{framework.NewTask("x", "true").Build()}},
	} {
		if _, err := framework.NewGang(d, spec); !errors.Is(err, framework.ErrInvalidSpec) {
			t.Errorf("%s: %v, want ErrInvalidSpec", name, err)
		}
	}
	g, err := framework.NewGang(d, framework.GangSpec{GroupID: "g", Tasks: ok})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); !errors.Is(err, framework.ErrNotRunning) {
		t.Fatalf("Start before Run: %v, want ErrNotRunning", err)
	}
}

// TestGang_StaleOffersAcquireAgain gives a gang a placement made only of an
// offer the leader never made (as a stale one would be): the launch is
// refused, nothing runs, and the gang goes on acquiring and completes on
// real offers with the same tasks.
func TestGang_StaleOffersAcquireAgain(t *testing.T) {
	c := rackCluster(t, 1)
	s, r := startGang(t, c, framework.GangSpec{
		GroupID: "stale",
		Tasks:   gangTasks("rank", 1, unit(), testcluster.RunUntilKilled()),
		Timeout: 5 * time.Second,
	}, framework.WithSuppressed())
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if len(s.RegisteredIDs()) == 0 {
			return errors.New("not registered")
		}
		return nil
	})
	agent := c.Agents()[0]
	forged := protocol.Offer{ID: "of-forged", FrameworkID: r.d.ID(), AgentID: agent.ID(),
		Resources: testcluster.DefaultAgentResources(), Attributes: protocol.Attributes{"rack": protocol.Text("r0")},
		Kind: protocol.OfferFair}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := s.gang.Offer(ctx, []protocol.Offer{forged}); err != nil {
		t.Fatalf("gang on a stale offer: %v, want it to acquire again", err)
	}
	select {
	case <-s.gang.Done():
		t.Fatalf("gang ended on a stale offer: %v", s.gang.Err())
	default:
	}
	if err := r.d.Revive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := waitGang(t, s.gang); err != nil {
		t.Fatal(err)
	}
	s.WaitState(t, "rank-0", protocol.TaskRunning)
	if ts := agent.Tasks(); len(ts) != 1 || ts[0].Launches != 1 {
		t.Fatalf("agent runs %+v, want rank-0 once", ts)
	}
}

// TestGang_PrepareCompletesPlacedTasks: Prepare sees the placed tasks,
// with agents and ports, before the launch, and what it sets is what the
// agents run: here every task learns the first task's agent and port.
func TestGang_PrepareCompletesPlacedTasks(t *testing.T) {
	res := testcluster.DefaultAgentResources()
	res.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 31009}}}
	c := testcluster.New(t, testcluster.Options{Agents: 3, AgentResources: res, AgentAttributes: func(i int) protocol.Attributes {
		return protocol.Attributes{"rack": protocol.Text(fmt.Sprint("r", i))}
	}})
	var seen []protocol.TaskInfo
	s, _ := startGang(t, c, framework.GangSpec{
		GroupID:     "prepared",
		Tasks:       gangTasks("rank", 3, unit(), testcluster.RunUntilKilled()),
		Ports:       1,
		Constraints: []protocol.Constraint{uniqueRack},
		Timeout:     5 * time.Second,
		Prepare: func(tasks []protocol.TaskInfo) error {
			seen = slices.Clone(tasks)
			ports := placement.PortList(tasks[0].Resources.Ranges[protocol.ResPorts])
			if len(ports) != 1 {
				return fmt.Errorf("first task has ports %v, want one", ports)
			}
			root := fmt.Sprintf("%s:%d", tasks[0].AgentID, ports[0])
			for i := range tasks {
				if tasks[i].Command.Env == nil {
					tasks[i].Command.Env = map[string]string{}
				}
				tasks[i].Command.Env["ROOT"] = root
			}
			return nil
		},
	})
	if err := waitGang(t, s.gang); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Fatalf("Prepare saw %d tasks, want 3", len(seen))
	}
	for i, ti := range seen {
		if ti.TaskID != protocol.TaskID(fmt.Sprint("rank-", i)) || ti.AgentID == "" {
			t.Fatalf("Prepare saw task %d as %s on agent %q, want rank-%d placed", i, ti.TaskID, ti.AgentID, i)
		}
	}
	want := fmt.Sprintf("%s:%d", seen[0].AgentID, placement.PortList(seen[0].Resources.Ranges[protocol.ResPorts])[0])
	for _, ti := range s.gang.Tasks() {
		if got := ti.Command.Env["ROOT"]; got != want {
			t.Errorf("gang task %s has ROOT=%q, want %q", ti.TaskID, got, want)
		}
	}
	for _, a := range c.Agents() {
		for _, at := range a.Tasks() {
			if got := at.Info.Command.Env["ROOT"]; got != want {
				t.Errorf("agent %s runs %s with ROOT=%q, want %q", a.Hostname(), at.Info.TaskID, got, want)
			}
		}
	}
}

// TestGang_PrepareFails: a Prepare error launches nothing, fails the gang
// with ErrGangLaunch and gives back every offer it held.
func TestGang_PrepareFails(t *testing.T) {
	c := rackCluster(t, 2)
	s, r := startGang(t, c, framework.GangSpec{
		GroupID: "unprepared",
		Tasks:   gangTasks("rank", 2, unit(), testcluster.RunUntilKilled()),
		Timeout: 5 * time.Second,
		Prepare: func([]protocol.TaskInfo) error { return errors.New("no root address") },
	})
	err := waitGang(t, s.gang)
	if !errors.Is(err, framework.ErrGangLaunch) {
		t.Fatalf("gang: %v, want ErrGangLaunch", err)
	}
	if s.gang.Held() != 0 || len(s.gang.Tasks()) != 0 {
		t.Fatalf("after a failed Prepare: gang holds %d offers, tasks %v", s.gang.Held(), s.gang.Tasks())
	}
	// The scheduler declined what Offer gave back.
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if n := len(r.d.Offers()); n != 0 {
			return fmt.Errorf("driver holds %d offers", n)
		}
		return nil
	})
	for _, a := range c.Agents() {
		if n := len(a.Tasks()); n != 0 {
			t.Fatalf("agent %s runs %d tasks", a.Hostname(), n)
		}
	}
}

// uniqueRack spreads a gang's tasks over racks.
var uniqueRack = protocol.Constraint{Attribute: "rack", Op: protocol.OpUnique}
