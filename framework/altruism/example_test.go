package altruism_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// A map stage of three one-core tasks feeds a one-task reduce, in a share
// of two cores. Packed forward, the job takes three minutes (two maps, the
// third map, the reduce); packed backward from there, only one map must
// start now, and a core is left over for others until the plan timer.
func ExamplePlanner_Plan() {
	job, _ := altruism.NewJob(altruism.JobSpec{Stages: []altruism.StageSpec{
		{Name: "map", Tasks: 3, Demand: protocol.Scalars(map[string]int64{"cpus": 1000}), Duration: time.Minute},
		{Name: "reduce", Tasks: 1, Demand: protocol.Scalars(map[string]int64{"cpus": 1000}), Duration: time.Minute, Parents: []string{"map"}},
	}})
	_ = job.ShareChanged(protocol.Scalars(map[string]int64{"cpus": 2000}))
	planner, _ := altruism.NewPlanner(altruism.DefaultConfig())
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, _ := planner.Plan(job, now, rand.New(rand.NewPCG(1, 1)).Float64())
	fmt.Println("T_k:", d.Completion)
	fmt.Println("must start:", d.MustStart)
	fmt.Println("optional:", d.Optional)
	fmt.Println("leftover:", d.Leftover)
	fmt.Println("plan again at:", d.NextReplan.Sub(now))
	// Output:
	// T_k: 3m0s
	// must start: [map/0]
	// optional: [map/1 map/2]
	// leftover: cpus:1000
	// plan again at: 1m0s
}
