package altruism

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// benchSpec is a realistic four-stage DAG of 200 tasks per stage: two map
// stages reading different inputs, a join (barrier on both) and an
// aggregation, with per-stage demands and durations of a typical analytics
// query.
func benchSpec() JobSpec {
	res := func(milli, mib int64) protocol.Resources {
		return protocol.Scalars(map[string]int64{protocol.ResCPUs: milli, protocol.ResMem: mib, protocol.ResDisk: mib / 2})
	}
	return JobSpec{Stages: []StageSpec{
		{Name: "map-a", Tasks: 200, Demand: res(1000, 2048), Duration: 40 * time.Second},
		{Name: "map-b", Tasks: 200, Demand: res(2000, 1024), Duration: 25 * time.Second},
		{Name: "join", Tasks: 200, Demand: res(1500, 6144), Duration: 60 * time.Second, Parents: []string{"map-a", "map-b"}},
		{Name: "agg", Tasks: 200, Demand: res(500, 3072), Duration: 15 * time.Second, Parents: []string{"join"}},
	}}
}

// benchShare is 40 cores and 160 GiB: about a tenth of the job at once.
var benchShare = protocol.Scalars(map[string]int64{protocol.ResCPUs: 40000, protocol.ResMem: 160 * 1024, protocol.ResDisk: 80 * 1024})

func benchJob(b *testing.B) *Job {
	b.Helper()
	j, err := NewJob(benchSpec())
	if err != nil {
		b.Fatal(err)
	}
	if err := j.ShareChanged(benchShare); err != nil {
		b.Fatal(err)
	}
	return j
}

// BenchmarkPlan measures one plan of the 4 × 200 job: at arrival (nothing
// started), part-way through (maps done, the join running in waves, tasks
// part-way through their run), and greedy. Each iteration forgets the
// previous commitment so that every plan does the full work.
func BenchmarkPlan(b *testing.B) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		setup func(b *testing.B, j *Job) time.Time
		draw  float64
	}{
		{"arrival", func(*testing.B, *Job) time.Time { return start }, 0},
		{"midrun", midrunState, 0},
		{"greedy", func(*testing.B, *Job) time.Time { return start }, 0.99},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			j := benchJob(b)
			now := tc.setup(b, j)
			p := mustPlanner(b, Config{Altruism: 0.5, MinRemaining: DefaultMinRemaining})
			b.ReportAllocs()
			for b.Loop() {
				j.commit.clear()
				if _, err := p.Plan(j, now, tc.draw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// midrunState runs the job altruistically until 100 join tasks have
// finished, then returns an instant between task ends.
func midrunState(b *testing.B, j *Job) time.Time {
	b.Helper()
	dr := &driver{t: b, p: mustPlanner(b, DefaultConfig()), j: j, rng: rand.New(rand.NewPCG(1, 2)),
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for {
		done := 0
		for _, ti := range j.Tasks() {
			if ti.ID.Stage == "join" && ti.State == Finished {
				done++
			}
		}
		if done >= 100 {
			break
		}
		if !dr.advance(dr.plan()) {
			b.Fatal("job stopped early")
		}
	}
	return dr.now.Add(time.Second)
}

// BenchmarkPlanLarge plans, at arrival, a 10,000-task job: 16 stages of 625
// tasks in four layers of four, each stage a barrier on two stages of the
// layer above, in a share that holds about 2% of the job at once. The paper
// reports the application master's logic at under 10 ms per decision.
func BenchmarkPlanLarge(b *testing.B) {
	var spec JobSpec
	for layer := range 4 {
		for k := range 4 {
			st := StageSpec{
				Name:     fmt.Sprintf("l%d-%d", layer, k),
				Tasks:    625,
				Demand:   protocol.Scalars(map[string]int64{protocol.ResCPUs: int64(500 * (1 + (layer+k)%4)), protocol.ResMem: int64(1024 * (1 + (layer*k)%5))}),
				Duration: time.Duration(10+7*((layer+2*k)%5)) * time.Second,
			}
			if layer > 0 {
				st.Parents = []string{fmt.Sprintf("l%d-%d", layer-1, k), fmt.Sprintf("l%d-%d", layer-1, (k+1)%4)}
			}
			spec.Stages = append(spec.Stages, st)
		}
	}
	j, err := NewJob(spec)
	if err != nil {
		b.Fatal(err)
	}
	if err := j.ShareChanged(protocol.Scalars(map[string]int64{protocol.ResCPUs: 200000, protocol.ResMem: 640 * 1024})); err != nil {
		b.Fatal(err)
	}
	p := mustPlanner(b, DefaultConfig())
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		j.commit.clear()
		if _, err := p.Plan(j, now, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplanLoop runs the whole 4 × 200 job event by event, planning
// after every event and following the plans, and reports the mean time of
// one plan (the driver's own bookkeeping excluded).
func BenchmarkReplanLoop(b *testing.B) {
	plans := 0
	var spent time.Duration
	for b.Loop() {
		j := benchJob(b)
		dr := &driver{t: b, p: mustPlanner(b, DefaultConfig()), j: j, rng: rand.New(rand.NewPCG(1, 2)),
			now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		if !dr.run(0) {
			b.Fatal("job not done")
		}
		plans += len(dr.plans)
		spent += dr.planTime
	}
	b.ReportMetric(float64(plans)/float64(b.N), "plans/op")
	b.ReportMetric(float64(spent.Nanoseconds())/float64(plans), "ns/plan")
}
