package altruism

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// tpcdsLargeSpec is a 23-stage job of 10,000 tasks, the 95th percentile of
// TPC-DS stage counts (docs/carbyne.md, "Workloads"): three input stages, then
// stages that each wait on two earlier ones (barriers), with demands and
// durations that vary by stage.
func tpcdsLargeSpec() JobSpec {
	var spec JobSpec
	for i := range 23 {
		tasks := 435
		if i >= 18 {
			tasks = 434
		}
		st := StageSpec{
			Name:  fmt.Sprintf("s%02d", i),
			Tasks: tasks,
			Demand: protocol.Scalars(map[string]int64{
				protocol.ResCPUs: int64(500 * (1 + i%4)), protocol.ResMem: int64(512 * (1 + (i*7)%6)),
			}),
			Duration: time.Duration(5+(i*11)%40) * time.Second,
		}
		if i >= 3 {
			st.Parents = []string{fmt.Sprintf("s%02d", i-3), fmt.Sprintf("s%02d", i-2)}
		}
		spec.Stages = append(spec.Stages, st)
	}
	return spec
}

// BenchmarkPlanTPCDSLarge measures one planning decision for the 23-stage,
// 10,000-task job in a share of 200 cores and 640 GiB (about a tenth of
// its input stages at once): at arrival, and after an event part-way
// through its run (the job driven plan by plan, following each plan, until
// 2,000 tasks have finished, then one task ends). The paper's budget for
// the job-side logic is 10 ms per decision.
func BenchmarkPlanTPCDSLarge(b *testing.B) {
	share := protocol.Scalars(map[string]int64{protocol.ResCPUs: 200000, protocol.ResMem: 640 * 1024})
	newJob := func(b *testing.B) *Job {
		j, err := NewJob(tpcdsLargeSpec())
		if err != nil {
			b.Fatal(err)
		}
		if err := j.ShareChanged(share); err != nil {
			b.Fatal(err)
		}
		return j
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Run("arrival", func(b *testing.B) {
		j := newJob(b)
		p := mustPlanner(b, DefaultConfig())
		b.ReportAllocs()
		for b.Loop() {
			j.commit.clear()
			if _, err := p.Plan(j, start, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("event", func(b *testing.B) {
		j := newJob(b)
		dr := &driver{t: b, p: mustPlanner(b, DefaultConfig()), j: j, rng: rand.New(rand.NewPCG(1, 2)), now: start}
		for finished(j) < 2000 {
			if !dr.advance(dr.plan()) {
				b.Fatal("job stopped early")
			}
		}
		p := mustPlanner(b, DefaultConfig())
		b.ReportAllocs()
		for b.Loop() {
			j.commit.clear()
			if _, err := p.Plan(j, dr.now, 0); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(dr.plans)), "plans-to-reach")
	})
}

func finished(j *Job) int {
	n := 0
	for _, ti := range j.Tasks() {
		if ti.State == Finished {
			n++
		}
	}
	return n
}
