package altruism

import (
	"testing"
	"time"
)

func mustPlanner(t testing.TB, cfg Config) *Planner {
	t.Helper()
	p, err := NewPlanner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustPlan(t testing.TB, p *Planner, j *Job, now time.Time, draw float64) Decision {
	t.Helper()
	d, err := p.Plan(j, now, draw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
