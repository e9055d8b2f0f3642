package offers

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// checkCRV recomputes the Constraint Resource Vector from scratch and
// compares it with the incremental one, and checks that no outstanding
// offer was sized for a shape whose hard constraints its agent breaks.
func checkCRV(a *Allocator) error {
	type want struct {
		refs, agents int
		supply, free vec
		demand       vec
		tasks        int64
	}
	exp := map[*crvClass]*want{}
	for _, c := range a.crv.list {
		if a.crv.byKey[c.key] != c {
			return fmt.Errorf("class %s not interned", c.key)
		}
		w := &want{}
		exp[c] = w
		for _, ag := range a.agentList {
			ok, _ := c.c.Matches(ag.info.Attributes)
			if ok != slices.Contains(ag.classes, c) {
				return fmt.Errorf("agent %s: class %s membership %v, list %v", ag.id, c.key, ok, !ok)
			}
			if ok {
				w.agents++
				w.supply = w.supply.add(ag.total)
				w.free = w.free.add(ag.free)
			}
		}
	}
	if len(exp) != len(a.crv.byKey) {
		return fmt.Errorf("%d classes listed, %d interned", len(exp), len(a.crv.byKey))
	}
	for _, f := range a.fwByIdx {
		if f == nil {
			continue
		}
		for _, s := range f.shapes {
			if len(s.cls) != len(s.hard) || len(s.softCls) != len(s.soft) {
				return fmt.Errorf("%s shape %s: %d/%d classes for %d/%d constraints", f.id, s.key, len(s.cls), len(s.softCls), len(s.hard), len(s.soft))
			}
			units := int64(0)
			if f.declared && !f.suppressed {
				units = min(s.count, crvMaxUnits) + min(f.launched[s.key], crvMaxUnits)
			}
			add := func(c *crvClass, count bool) error {
				w := exp[c]
				if w == nil {
					return fmt.Errorf("%s shape %s uses a dropped class %s", f.id, s.key, c.key)
				}
				w.refs++
				if count && units > 0 {
					w.tasks += units
					w.demand = w.demand.grow(len(s.res))
					for j, x := range s.res {
						w.demand[j] += satMul(units, x)
					}
				}
				return nil
			}
			for _, c := range s.cls {
				if err := add(c, true); err != nil {
					return err
				}
			}
			for _, c := range s.softCls {
				if err := add(c, !s.relaxed); err != nil {
					return err
				}
			}
		}
	}
	for c, w := range exp {
		got := want{refs: c.refs, agents: c.agents, supply: c.supply, free: c.free, demand: c.demand, tasks: c.tasks}
		if got.refs != w.refs || got.agents != w.agents || got.tasks != w.tasks ||
			!vecEqual(got.supply, w.supply) || !vecEqual(got.free, w.free) || !vecEqual(got.demand, w.demand) {
			return fmt.Errorf("class %s: incremental %+v, recomputed %+v", c.key, got, *w)
		}
	}
	for _, o := range a.offers {
		for key := range o.units {
			for _, s := range o.fw.shapesOf(o.kind) {
				if s.key == key {
					if ok, why := protocol.MatchHard(s.hard, o.ag.info.Attributes); !ok {
						return fmt.Errorf("offer %s on %s sized for %s: %s", o.id, o.ag.id, key, why)
					}
				}
			}
		}
	}
	return nil
}

// crvRow returns a's CRV row for the constraint key, failing the test
// when there is none.
func crvRow(t *testing.T, a *Allocator, key string) ConstraintLoad {
	t.Helper()
	for _, l := range a.CRV() {
		if l.Constraint == key {
			return l
		}
	}
	t.Fatalf("no CRV row %s in %+v", key, a.CRV())
	return ConstraintLoad{}
}

// mustCRV fails the test at step when a's incremental CRV disagrees with
// one recomputed from scratch.
func mustCRV(t *testing.T, a *Allocator, step string) {
	t.Helper()
	if err := checkCRV(a); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

func TestCRV_bookkeeping(t *testing.T) {
	gpu := protocol.Attributes{"gpu": protocol.Text("a100"), "rack": protocol.Text("r1")}
	a := setup(t, DefaultConfig(), []AgentInfo{
		agentInfo("a1", cpuMem(4000, 8192), gpu),
		agentInfo("a2", cpuMem(4000, 8192), protocol.Attributes{"rack": protocol.Text("r2")}),
		agentInfo("a3", cpuMem(4000, 8192), nil),
	}, []fwSpec{{ID: "ml"}, {ID: "web"}})
	needGPU := protocol.Constraint{Attribute: "gpu", Op: protocol.OpEq, Value: "a100"}
	racks := protocol.Constraint{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r2", "r1", "r2"}}
	gpuKey, rackKey := `gpu == "a100"`, "rack in [r1 r2]"

	// Arrivals: three GPU tasks and two rack tasks pending.
	demand(t, a, "ml", Demand{Resources: cpuMem(1000, 1024), Count: 3, Constraints: []protocol.Constraint{needGPU}})
	demand(t, a, "web", Demand{Resources: cpuMem(500, 512), Count: 2, Constraints: []protocol.Constraint{racks}})
	mustCRV(t, a, "declared")
	g := crvRow(t, a, gpuKey)
	if g.Agents != 1 || g.Tasks != 3 || g.Demand.String() != "cpus:3000;mem:3072" ||
		g.Supply.String() != "cpus:4000;mem:8192" || g.Free.String() != g.Supply.String() || g.Ratio != 0.75 || !g.Contended {
		t.Fatalf("gpu row after arrivals: %+v", g)
	}
	if r := crvRow(t, a, rackKey); r.Agents != 2 || r.Tasks != 2 || r.Ratio != 1000.0/8000 {
		t.Fatalf("rack row after arrivals: %+v", r)
	}
	if got := []string{a.CRV()[0].Constraint, a.CRV()[1].Constraint}; !slices.Equal(got, []string{gpuKey, rackKey}) {
		t.Fatalf("CRV order: got %v, want highest ratio first", got)
	}

	// Offers keep tasks outstanding; launching makes them running, which
	// still counts (pending plus running); free supply drops.
	d := a.Allocate(t0)
	mustCRV(t, a, "offered")
	o := offerOn(t, d.Offers, "ml", "a1")
	tasks := []protocol.Resources{cpuMem(1000, 1024), cpuMem(1000, 1024)}
	if _, err := a.Accept("ml", []protocol.OfferID{o.ID}, tasks, t0); err != nil {
		t.Fatal(err)
	}
	mustCRV(t, a, "launched")
	if g := crvRow(t, a, gpuKey); g.Tasks != 3 || g.Free.String() != "cpus:2000;mem:6144" {
		t.Fatalf("gpu row after launching 2 of 3: %+v", g)
	}

	// Completions: a task ends, and the framework lowers its count.
	must(t, a.Recover("ml", "a1", cpuMem(1000, 1024)))
	mustCRV(t, a, "one completed")
	if g := crvRow(t, a, gpuKey); g.Tasks != 2 || g.Free.String() != "cpus:3000;mem:7168" {
		t.Fatalf("gpu row after a completion: %+v", g)
	}

	// A new agent with the attribute raises supply; removing it lowers it.
	addAgent(t, a, "a4", cpuMem(8000, 8192), gpu)
	mustCRV(t, a, "agent added")
	if g := crvRow(t, a, gpuKey); g.Agents != 2 || g.Supply.String() != "cpus:12000;mem:16384" {
		t.Fatalf("gpu row after adding a4: %+v", g)
	}
	if _, err := a.RemoveAgent("a4"); err != nil {
		t.Fatal(err)
	}
	mustCRV(t, a, "agent removed")

	// Suppression takes the demand out; revive puts it back.
	must(t, a.Suppress("web"))
	mustCRV(t, a, "suppressed")
	if r := crvRow(t, a, rackKey); r.Tasks != 0 || r.Ratio != 0 {
		t.Fatalf("rack row while suppressed: %+v", r)
	}
	must(t, a.Revive("web"))
	mustCRV(t, a, "revived")

	// Drained: every task ended and nothing is declared: D returns to 0
	// and the classes go idle, kept for the next shape that names them.
	must(t, a.Recover("ml", "a1", cpuMem(1000, 1024)))
	must(t, a.ClearDemand("ml"))
	mustCRV(t, a, "ml cleared")
	if _, err := a.RemoveFramework("web"); err != nil {
		t.Fatal(err)
	}
	mustCRV(t, a, "web removed")
	if got := a.CRV(); len(got) != 0 {
		t.Fatalf("CRV after draining: %+v", got)
	}
	for _, ag := range a.agentList {
		for _, c := range ag.classes {
			if c.refs != 0 || !slices.Contains(a.crv.idle, c) {
				t.Fatalf("agent %s keeps class %s with %d references, not idle", ag.id, c.key, c.refs)
			}
		}
	}
}

// A class no shape uses stays idle for the next shape that names it, so
// demand that comes and goes is not matched against every agent again;
// beyond maxIdleClasses the oldest idle classes go.
func TestCRV_idleClasses(t *testing.T) {
	a := setup(t, DefaultConfig(), []AgentInfo{agentInfo("a1", cpuMem(1000, 1024), protocol.Attributes{"rack": protocol.Text("r1")})}, []fwSpec{{ID: "f1"}})
	rack := func(v string) Demand {
		return Demand{Resources: cpuMem(100, 100), Count: 1, Constraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: v}}}
	}
	demand(t, a, "f1", rack("r1"))
	c := a.crv.byKey[`rack == "r1"`]
	if c == nil {
		t.Fatalf("classes %v", a.crv.byKey)
	}
	must(t, a.ClearDemand("f1"))
	demand(t, a, "f1", rack("r1"))
	if a.crv.byKey[`rack == "r1"`] != c || c.refs != 1 || c.agents != 1 {
		t.Fatalf("redeclared after going idle: class %p (was %p), %d refs, %d agents", a.crv.byKey[`rack == "r1"`], c, c.refs, c.agents)
	}
	for i := range maxIdleClasses + 1 {
		demand(t, a, "f1", rack(fmt.Sprint("x", i)))
	}
	must(t, a.ClearDemand("f1"))
	if len(a.crv.idle) != maxIdleClasses || len(a.crv.byKey) != maxIdleClasses {
		t.Fatalf("%d idle classes, %d known; want %d", len(a.crv.idle), len(a.crv.byKey), maxIdleClasses)
	}
	if _, ok := a.crv.byKey[`rack == "r1"`]; ok {
		t.Fatal("the oldest idle class was kept beyond the bound")
	}
	if len(a.agentList[0].classes) > maxIdleClasses {
		t.Fatalf("agent holds %d classes", len(a.agentList[0].classes))
	}
}

func TestCRV_unsatisfiableAndSharedClasses(t *testing.T) {
	a := setup(t, DefaultConfig(), []AgentInfo{agentInfo("a1", cpuMem(1000, 1024), nil)}, []fwSpec{{ID: "f1"}, {ID: "f2"}})
	tpu := protocol.Constraint{Attribute: "tpu", Op: protocol.OpExists}
	demand(t, a, "f1", Demand{Resources: cpuMem(100, 100), Count: 1, Constraints: []protocol.Constraint{tpu}})
	demand(t, a, "f2", Demand{Resources: cpuMem(100, 100), Count: 2, Constraints: []protocol.Constraint{tpu}})
	got := a.CRV()
	want := []ConstraintLoad{{Constraint: "tpu exists", Tasks: 3, Demand: cpuMem(300, 300),
		Supply: protocol.Resources{}, Free: protocol.Resources{}, Ratio: math.MaxFloat64, Unsatisfiable: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CRV: got %+v, want %+v", got, want)
	}
	// Redeclaring the same constraint keeps the class (two shapes use it).
	c := a.crv.byKey["tpu exists"]
	demand(t, a, "f1", Demand{Resources: cpuMem(100, 100), Count: 5, Constraints: []protocol.Constraint{tpu}})
	if a.crv.byKey["tpu exists"] != c || c.refs != 2 || c.tasks != 7 {
		t.Fatalf("class after redeclaring: %+v", c)
	}
	if d := a.Allocate(t0); len(d.Offers) != 0 {
		t.Fatalf("offers for unsatisfiable hard constraints: %+v", d.Offers)
	}
}

// TestCRV_operators evaluates every per-task operator through the
// allocator (offers and CRV rows), with typed comparisons and missing
// attributes; protocol's TestConstraint_Matches covers each operator on
// its own.
func TestCRV_operators(t *testing.T) {
	agents := []AgentInfo{
		agentInfo("num", cpuMem(1000, 1024), protocol.Attributes{"cores": protocol.Number(16), "kernel": protocol.Text("5.15"), "arch": protocol.Text("amd64")}),
		agentInfo("ver", cpuMem(1000, 1024), protocol.Attributes{"cores": protocol.Number(8), "kernel": protocol.Text("5.4"), "arch": protocol.Text("arm64")}),
		agentInfo("set", cpuMem(1000, 1024), protocol.Attributes{"features": protocol.Set("avx", "sse4"), "kernel": protocol.Text("6.10")}),
		agentInfo("bare", cpuMem(1000, 1024), nil),
	}
	c := func(attr string, op protocol.Op, v string, vs ...string) protocol.Constraint {
		return protocol.Constraint{Attribute: attr, Op: op, Value: v, Values: vs}
	}
	tests := []struct {
		c    protocol.Constraint
		want []string
	}{
		{c("arch", protocol.OpEq, "amd64"), []string{"num"}},
		{c("cores", protocol.OpEq, "16.0"), []string{"num"}},
		{c("arch", protocol.OpNe, "amd64"), []string{"bare", "set", "ver"}}, // missing satisfies !=
		{c("cores", protocol.OpNe, "8"), []string{"bare", "num", "set"}},
		{c("cores", protocol.OpLt, "10"), []string{"ver"}}, // numeric, not "10" < "8" as text
		{c("cores", protocol.OpLe, "16"), []string{"num", "ver"}},
		{c("cores", protocol.OpGt, "8"), []string{"num"}},
		{c("cores", protocol.OpGe, "8"), []string{"num", "ver"}},
		{c("cores", protocol.OpGe, "many"), nil},                    // number against text: never ordered
		{c("kernel", protocol.OpGt, "5.9"), []string{"num", "set"}}, // versions: 5.15 > 5.9, 6.10 > 5.9
		{c("kernel", protocol.OpLt, "5.10"), []string{"ver"}},
		{c("kernel", protocol.OpIn, "", "5.15.0", "6.1"), []string{"num"}},
		{c("features", protocol.OpIn, "", "neon", "avx"), []string{"set"}}, // set: any member
		{c("arch", protocol.OpNotIn, "", "amd64"), []string{"bare", "set", "ver"}},
		{c("features", protocol.OpNotIn, "", "avx"), []string{"bare", "num", "ver"}},
		{c("features", protocol.OpExists, ""), []string{"set"}},
		{c("features", protocol.OpNotExists, ""), []string{"bare", "num", "ver"}},
		{c("arch", protocol.OpRegex, "^a[rm]"), []string{"num", "ver"}},
		{c("gpu", protocol.OpGe, "0"), nil}, // missing fails ordered operators
	}
	for _, tc := range tests {
		t.Run(tc.c.String(), func(t *testing.T) {
			a := setup(t, DefaultConfig(), agents, []fwSpec{{ID: "f1", Demand: []Demand{
				{Resources: cpuMem(1000, 1024), Count: Unlimited, Constraints: []protocol.Constraint{tc.c}}}}})
			var got []string
			for _, o := range a.Allocate(t0).Offers {
				got = append(got, string(o.AgentID))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("agents offered: got %v, want %v", got, tc.want)
			}
			if rows := a.CRV(); len(rows) != 1 || rows[0].Agents != len(tc.want) {
				t.Fatalf("CRV: got %+v, want one row with %d agents", rows, len(tc.want))
			}
			if err := checkCRV(a); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCRV_config(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.SoftWait = -time.Second },
		func(c *Config) { c.CRVMinRatio = -1 },
		func(c *Config) { c.CRVMinRatio = math.NaN() },
		func(c *Config) { c.CRVMinRatio = math.Inf(1) },
	} {
		cfg := DefaultConfig()
		mod(&cfg)
		if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%+v): got %v, want ErrInvalid", cfg, err)
		}
	}
	// A ratio threshold above every class turns steering off.
	cfg := DefaultConfig()
	cfg.CRVMinRatio = 10
	a := setup(t, cfg, []AgentInfo{
		agentInfo("a0", cpuMem(1000, 1024), protocol.Attributes{"gpu": protocol.Text("x")}),
		agentInfo("a1", cpuMem(1000, 1024), nil),
	}, []fwSpec{{ID: "f1", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 1,
		Constraints: []protocol.Constraint{{Attribute: "gpu", Op: protocol.OpExists}}}}}})
	a.Allocate(t0)
	if a.crv.turn.on || a.CRV()[0].Contended {
		t.Fatalf("steering on below the threshold: %+v", a.CRV())
	}
}
