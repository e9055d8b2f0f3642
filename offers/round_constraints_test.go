package offers

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func TestAllocator_Allocate_hardConstraints(t *testing.T) {
	agents := []AgentInfo{
		agentInfo("a1", cpuMem(2000, 2048), protocol.Attributes{"rack": protocol.Text("r1"), "gpu": protocol.Text("yes")}),
		agentInfo("a2", cpuMem(2000, 2048), protocol.Attributes{"rack": protocol.Text("r2")}),
		agentInfo("a3", cpuMem(2000, 2048), nil),
	}
	tests := []struct {
		name string
		c    protocol.Constraint
		want []string // agents offered
	}{
		{"eq", protocol.Constraint{Attribute: "rack", Op: protocol.OpEq, Value: "r2"}, []string{"a2"}},
		{"in", protocol.Constraint{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r1", "r2"}}, []string{"a1", "a2"}},
		{"ne matches missing attribute", protocol.Constraint{Attribute: "rack", Op: protocol.OpNe, Value: "r1"}, []string{"a2", "a3"}},
		{"exists", protocol.Constraint{Attribute: "gpu", Op: protocol.OpExists}, []string{"a1"}},
		{"no agent matches", protocol.Constraint{Attribute: "rack", Op: protocol.OpEq, Value: "r9"}, nil},
		{"soft filters until it relaxes", protocol.Constraint{Attribute: "rack", Op: protocol.OpEq, Value: "r2", Soft: true}, []string{"a2"}},
		{"unsatisfiable soft relaxes at once", protocol.Constraint{Attribute: "rack", Op: protocol.OpEq, Value: "r9", Soft: true}, []string{"a1", "a2", "a3"}},
		{"group operator does not restrict", protocol.Constraint{Attribute: "rack", Op: protocol.OpUnique}, []string{"a1", "a2", "a3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := setup(t, testConfig(PolicyDynamic), agents, []fwSpec{{ID: "f1", Demand: []Demand{
				{Resources: cpuMem(1000, 1024), Count: Unlimited, Constraints: []protocol.Constraint{tc.c}},
			}}})
			var got []string
			for _, o := range a.Allocate(t0).Offers {
				got = append(got, string(o.AgentID))
				if o.Tasks != 2 {
					t.Errorf("offer on %s: got %d tasks, want 2", o.AgentID, o.Tasks)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("agents offered: got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAllocator_Allocate_ports(t *testing.T) {
	ag := []AgentInfo{agentInfo("a1", withPorts(cpuMem(4000, 4096), 31000, 31009), nil)}
	d2 := func(n int64) []Demand { return []Demand{{Resources: cpuMem(100, 100), Ports: 2, Count: n}} }
	tests := []struct {
		name string
		fws  []fwSpec
		want []offerKey
	}{
		{"two ports per task", []fwSpec{{ID: "f1", Demand: d2(1)}},
			[]offerKey{{"f1", "a1", "cpus:100;mem:100;ports:[31000-31001]", 1}}},
		{"frameworks get disjoint ports", []fwSpec{{ID: "f1", Demand: d2(2)}, {ID: "f2", Demand: d2(2)}},
			[]offerKey{
				{"f1", "a1", "cpus:200;mem:200;ports:[31000-31001,31004-31005]", 2},
				{"f2", "a1", "cpus:200;mem:200;ports:[31002-31003,31006-31007]", 2},
			}},
		{"ports limit the units", []fwSpec{{ID: "f1", Demand: d2(Unlimited)}},
			[]offerKey{{"f1", "a1", "cpus:500;mem:500;ports:[31000-31009]", 5}}},
		{"too few ports", []fwSpec{{ID: "f1", Demand: []Demand{{Resources: cpuMem(100, 100), Ports: 11, Count: 1}}}},
			[]offerKey{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := setup(t, testConfig(PolicyDynamic), ag, tc.fws)
			if got := sortedKeys(a.Allocate(t0).Offers); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("offers: got %v, want %v", got, tc.want)
			}
			if err := checkInvariants(a); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAllocator_Allocate_portsNeverShared(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic), []AgentInfo{agentInfo("a1", withPorts(cpuMem(4000, 4096), 31000, 31005), nil)},
		[]fwSpec{{ID: "f1", Demand: []Demand{{Resources: cpuMem(100, 100), Ports: 2, Count: 1}}}})
	o1 := offerOn(t, a.Allocate(t0).Offers, "f1", "a1")
	p1 := o1.Resources.Ranges[protocol.ResPorts]
	if _, err := a.Accept("f1", ids(o1), []protocol.Resources{o1.Resources}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	addFw(t, a, "f2", "")
	demand(t, a, "f2", Demand{Resources: cpuMem(100, 100), Ports: 2, Count: 1})
	addFw(t, a, "f3", "")
	o := a.Allocate(at(2 * time.Second)).Offers
	o2, o3 := offerOn(t, o, "f2", "a1"), offerOn(t, o, "f3", "a1")
	p2, p3 := o2.Resources.Ranges[protocol.ResPorts], o3.Resources.Ranges[protocol.ResPorts]
	if got, want := p2.String(), "[31002-31003]"; got != want {
		t.Errorf("f2 ports: got %s, want %s", got, want)
	}
	if got, want := p3.String(), "[31004-31005]"; got != want {
		t.Errorf("f3 (remainder) ports: got %s, want %s", got, want)
	}
	all := []protocol.Ranges{p1, p2, p3}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if ov := all[i].Minus(all[i].Minus(all[j])); len(ov) > 0 {
				t.Errorf("ports %s given twice", ov)
			}
		}
	}
	if err := checkInvariants(a); err != nil {
		t.Fatal(err)
	}
}

// BUG: under the static policy a demand for ports only with an unlimited
// count never terminates: staticFill ignores ports, so a zero scalar shape
// always fits and never runs out. The round runs in a goroutine so the
// suite reports instead of hanging (the goroutine keeps spinning until the
// test binary exits).
func TestAllocator_Allocate_staticPortsOnlyDemand(t *testing.T) {
	for _, count := range []int64{3, Unlimited} {
		a := setup(t, testConfig(PolicyStatic), []AgentInfo{agentInfo("a1", withPorts(cpuMem(1000, 1024), 31000, 31009), nil)},
			[]fwSpec{{ID: "f1", Demand: []Demand{{Ports: 1, Count: count}}}})
		done := make(chan Decisions, 1)
		go func() { done <- a.Allocate(t0) }()
		select {
		case d := <-done:
			want := uint64(min(count, 10))
			if len(d.Offers) != 1 || d.Offers[0].Resources.Ranges[protocol.ResPorts].Count() != want {
				t.Errorf("count %d: got %v, want one offer of %d ports", count, keys(d.Offers), want)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("count %d: Allocate did not return within 5s (static fill loops forever on a ports-only shape)", count)
		}
	}
}
