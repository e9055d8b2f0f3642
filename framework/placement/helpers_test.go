package placement_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

func res(cpus, mem int64, ports ...protocol.Range) protocol.Resources {
	r := protocol.Scalars(map[string]int64{protocol.ResCPUs: cpus, protocol.ResMem: mem})
	if len(ports) > 0 {
		r.Ranges = map[string]protocol.Ranges{protocol.ResPorts: ports}
	}
	return r
}

func TestSumOffersAndByAgent(t *testing.T) {
	offers := []protocol.Offer{
		{ID: "o1", AgentID: "a", Resources: res(1000, 512, protocol.Range{Begin: 100, End: 101})},
		{ID: "o2", AgentID: "b", Resources: res(2000, 256)},
		{ID: "o3", AgentID: "a", Resources: res(500, 0, protocol.Range{Begin: 102, End: 105})},
	}
	sum := placement.SumOffers(offers)
	if !sum.Equal(res(3500, 768, protocol.Range{Begin: 100, End: 105})) {
		t.Fatalf("sum %s", sum)
	}
	groups := placement.ByAgent(offers)
	if len(groups) != 2 || len(groups[0]) != 2 || groups[0][1].ID != "o3" || groups[1][0].ID != "o2" {
		t.Fatalf("by agent %v", groups)
	}
	if ids := placement.OfferIDs(offers); !slices.Equal(ids, []protocol.OfferID{"o1", "o2", "o3"}) {
		t.Fatalf("ids %v", ids)
	}
}

func TestFitsSubtractHowMany(t *testing.T) {
	avail := res(4000, 1024, protocol.Range{Begin: 31000, End: 31009})
	tests := []struct {
		name  string
		shape protocol.TaskShape
		want  int64
	}{
		{"cpu bound", protocol.TaskShape{Resources: res(1000, 100)}, 4},
		{"mem bound", protocol.TaskShape{Resources: res(500, 300)}, 3},
		{"port bound", protocol.TaskShape{Resources: res(100, 10), Ports: 3}, 3},
		{"too big", protocol.TaskShape{Resources: res(5000, 10)}, 0},
		{"unknown resource", protocol.TaskShape{Resources: protocol.Scalars(map[string]int64{protocol.ResGPUs: 1})}, 0},
		{"asks nothing", protocol.TaskShape{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := placement.HowMany(avail, tt.shape); got != tt.want {
				t.Fatalf("HowMany = %d, want %d", got, tt.want)
			}
			if got := placement.FitsShape(avail, tt.shape); got != (tt.want > 0) {
				t.Fatalf("FitsShape = %v", got)
			}
		})
	}
	need := res(1000, 512, protocol.Range{Begin: 31000, End: 31001})
	if !placement.Fits(avail, need) {
		t.Fatal("need does not fit")
	}
	left := placement.Subtract(avail, need)
	if !left.Equal(res(3000, 512, protocol.Range{Begin: 31002, End: 31009})) {
		t.Fatalf("left %s", left)
	}
	if placement.Fits(left, need) {
		t.Fatal("taken ports fit again")
	}
}

func TestPickPorts(t *testing.T) {
	avail := res(0, 0, protocol.Range{Begin: 8000, End: 8001}, protocol.Range{Begin: 9000, End: 9010})
	got, err := placement.PickPorts(avail, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{8000, 8001, 9000, 9001}; !slices.Equal(placement.PortList(got), want) {
		t.Fatalf("picked %v, want %v", placement.PortList(got), want)
	}
	if _, err := placement.PickPorts(avail, 14); !errors.Is(err, protocol.ErrInsufficient) {
		t.Fatalf("too many ports: %v", err)
	}
	if got, err := placement.PickPorts(avail, 0); err != nil || len(got) != 0 {
		t.Fatalf("zero ports: %v %v", got, err)
	}
	withPorts := placement.WithPorts(res(100, 10), got)
	if !placement.Fits(avail.Add(res(100, 10)), withPorts) {
		t.Fatalf("task with picked ports does not fit its offer: %s", withPorts)
	}
}

func TestShapeOf(t *testing.T) {
	ti := framework.NewTask("t", "x").CPUs(500).Mem(64).
		Ports(protocol.Ranges{{Begin: 10, End: 12}}).
		Constraint(
			protocol.Constraint{Attribute: "arch", Op: protocol.OpEq, Value: "amd64"},
			protocol.Constraint{Attribute: "zone", Op: protocol.OpEq, Value: "a", Soft: true},
			protocol.Constraint{Attribute: "rack", Op: protocol.OpUnique},
		).Build()
	s := placement.ShapeOf(ti, 7)
	if s.Count != 7 || s.Ports != 3 || !s.Resources.Equal(res(500, 64)) || len(s.Constraints) != 1 ||
		s.Constraints[0].Attribute != "arch" {
		t.Fatalf("shape %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTaskBuilder(t *testing.T) {
	b := framework.NewTask("web-1", "./server", "--port", "8080").CPUs(500).Mem(256).Disk(10).GPUs(1).
		Env("A", "1").Label("app", "web").KillGrace(time.Second).User("nobody").On("agent-1").
		URI(protocol.URI{Value: "http://example.com/server", Executable: true})
	ti := b.Build()
	ti.AgentID = "agent-1"
	if err := ti.Validate(); err != nil {
		t.Fatal(err)
	}
	if ti.Name != "web-1" || ti.Command.Value != "./server" || len(ti.Command.Args) != 2 ||
		ti.Resources.Scalar(protocol.ResGPUs) != protocol.DeviceMilli || ti.Labels["app"] != "web" || ti.KillGracePeriod != time.Second {
		t.Fatalf("task %+v", ti)
	}
	// Build returns independent copies.
	b.Label("app", "other").CPUs(1)
	if ti.Labels["app"] != "web" || ti.Resources.Scalar(protocol.ResCPUs) != 500 {
		t.Fatal("a built task changed with the builder")
	}
	if sh := framework.NewTask("s", "echo hi").Shell().Build(); !sh.Command.Shell {
		t.Fatal("shell not set")
	}
	hb := framework.NewTask("h", "./server").CPUs(100).On("agent-1").
		HealthCheck(protocol.HealthCheck{Type: protocol.HealthCheckHTTP, Port: 8080, Path: "/healthz", ConsecutiveFailures: 3})
	h := hb.Build()
	if err := h.Validate(); err != nil || h.HealthCheck == nil || h.HealthCheck.Port != 8080 {
		t.Fatalf("task with a health check: %+v, %v", h.HealthCheck, err)
	}
	hb.Build().HealthCheck.Port = 1
	if h.HealthCheck.Port != 8080 {
		t.Fatal("built tasks share their health check")
	}
}

func attrs(kv ...string) protocol.Attributes {
	a := protocol.Attributes{}
	for i := 0; i+1 < len(kv); i += 2 {
		a[kv[i]] = protocol.ParseValue(kv[i+1])
	}
	return a
}

func TestConstraintHelpers(t *testing.T) {
	offers := []protocol.Offer{
		{ID: "o1", AgentID: "a1", Resources: res(1000, 100), Attributes: attrs("rack", "r1", "arch", "amd64")},
		{ID: "o2", AgentID: "a2", Resources: res(1000, 100), Attributes: attrs("rack", "r2", "arch", "arm64")},
		{ID: "o3", AgentID: "a3", Resources: res(1000, 100), Attributes: attrs("rack", "r1")},
	}
	amd := protocol.Constraint{Attribute: "arch", Op: protocol.OpEq, Value: "amd64"}
	soft := protocol.Constraint{Attribute: "rack", Op: protocol.OpEq, Value: "r2", Soft: true}
	unique := protocol.Constraint{Attribute: "rack", Op: protocol.OpUnique}
	got := placement.FilterOffers(offers, []protocol.Constraint{amd, soft, unique})
	if len(got) != 1 || got[0].ID != "o1" {
		t.Fatalf("filtered %v", got)
	}
	if ok, why := placement.MatchOffer(offers[2], []protocol.Constraint{amd}); ok || why == "" {
		t.Fatalf("missing attribute matched: %v %q", ok, why)
	}
	if n := placement.SoftMisses(offers[0], []protocol.Constraint{soft}); n != 1 {
		t.Fatalf("soft misses %d", n)
	}
	ti := framework.NewTask("t", "x").CPUs(1000).Mem(100).Constraint(amd).Build()
	if !placement.CanHost(offers[0], ti) || placement.CanHost(offers[1], ti) {
		t.Fatal("CanHost")
	}
	if g := placement.GroupConstraints([]protocol.Constraint{amd, soft, unique}); len(g) != 1 || g[0].Op != protocol.OpUnique {
		t.Fatalf("group constraints %v", g)
	}
	if g := placement.TaskConstraints([]protocol.Constraint{amd, soft, unique}); len(g) != 2 {
		t.Fatalf("task constraints %v", g)
	}
	cs := []protocol.Constraint{unique}
	placed := []protocol.Attributes{offers[0].Attributes}
	if placement.GroupAllows(cs, placed, offers[2].Attributes) || !placement.GroupAllows(cs, placed, offers[1].Attributes) {
		t.Fatal("GroupAllows unique")
	}
	err := placement.CheckGroup(cs, []protocol.Attributes{offers[0].Attributes, offers[2].Attributes})
	if !errors.Is(err, protocol.ErrConstraintViolated) {
		t.Fatalf("CheckGroup: %v", err)
	}
}

func TestBackoff(t *testing.T) {
	b := framework.Backoff{Min: 10 * time.Millisecond, Max: 80 * time.Millisecond}
	for attempt, want := range []time.Duration{10, 20, 40, 80, 80, 80} {
		want *= time.Millisecond
		for range 20 {
			got := b.Delay(attempt)
			if got < want/2 || got >= want {
				t.Fatalf("attempt %d: delay %s outside [%s, %s)", attempt, got, want/2, want)
			}
		}
	}
	if d := (framework.Backoff{}).Delay(100); d > time.Second {
		t.Fatalf("zero backoff delay %s", d)
	}
}
