package scenario

import (
	"testing"

	"github.com/allot-project/allot/offers"
)

func fig4() Spec {
	return Spec{
		Capacity: map[string]int64{"cpus": 10, "gpus": 10},
		Root: Node{Children: []Node{
			{Name: "n1", Children: []Node{{Name: "n1.1", Demand: map[string]int64{"cpus": 1}, Tasks: offers.Unlimited}}},
			{Name: "n2", Children: []Node{
				{Name: "n2.1", Demand: map[string]int64{"cpus": 1}, Tasks: offers.Unlimited},
				{Name: "n2.2", Demand: map[string]int64{"gpus": 1}, Tasks: offers.Unlimited},
			}},
		}},
	}
}

func TestQuickFig4(t *testing.T) {
	for _, p := range offers.Policies() {
		r, err := New(fig4(), p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Fill(); err != nil {
			t.Fatal(err)
		}
		fill := r.Counts()
		if err := r.Churn(2000, 1); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: fill %s churn %s", p, fill, r.Counts())
	}
}
