package offers

import (
	"math"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestClassKey(t *testing.T) {
	key, norm := ClassKey(protocol.Constraint{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r2", "r1", "r2"}, Soft: true, N: 3})
	if key != "rack in [r1 r2]" {
		t.Fatalf("key %q, want rack in [r1 r2]", key)
	}
	if norm.Soft || norm.N != 0 || len(norm.Values) != 2 {
		t.Fatalf("normalised %+v", norm)
	}
	hard, _ := ClassKey(protocol.Constraint{Attribute: "eth_gbps", Op: protocol.OpGe, Value: "25"})
	soft, _ := ClassKey(protocol.Constraint{Attribute: "eth_gbps", Op: protocol.OpGe, Value: "25", Soft: true})
	if hard != soft {
		t.Fatalf("hard %q and soft %q of one predicate are different classes", hard, soft)
	}
	if k, _ := classKey(protocol.Constraint{Attribute: "gpu", Op: protocol.OpEq, Value: "a100"}); k != `gpu == "a100"` {
		t.Fatalf("allocator class key %q", k)
	}
}

func TestClassLoad_ratioAndHysteresis(t *testing.T) {
	if r := (ClassLoad{}).Ratio(); r != 0 {
		t.Fatalf("empty ratio %v", r)
	}
	if r := (ClassLoad{Demand: 1}).Ratio(); !math.IsInf(r, 1) {
		t.Fatalf("no supply ratio %v, want +Inf", r)
	}
	h := DefaultHysteresis()
	l := ClassLoad{Supply: 10}
	for _, step := range []struct {
		demand int64
		want   bool
	}{{5, false}, {10, true}, {9, true}, {8, true}, {7, false}, {9, false}, {12, true}, {0, false}} {
		l.Demand = step.demand
		if got := l.Update(h); got != step.want || l.Contended != step.want {
			t.Fatalf("demand %d of 10: contended %v, want %v", step.demand, got, step.want)
		}
	}
}
