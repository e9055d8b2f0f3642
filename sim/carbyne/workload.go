package carbyne

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// workload is a cluster and the jobs that arrive on it.
type workload struct {
	machines int
	machine  protocol.Resources
	jobs     []jobSpec
}

// jobSpec is one DAG job: its true stages (what execution uses) and
// the estimates the planner sees (equal unless misestimated).
type jobSpec struct {
	name      string
	arrival   time.Duration
	stages    []altruism.StageSpec
	estimates []altruism.StageSpec
	greedy    bool
	// misestimated reports that estimates differ from stages.
	misestimated bool
}

// exact reports whether the planner sees the true demands and durations.
func (s jobSpec) exact() bool { return !s.misestimated }

// Random streams of a workload seed, kept apart so that changing one knob
// (arrivals, the greedy share) leaves the DAGs as they are.
const (
	streamDAG uint64 = iota + 1
	streamArrivals
	streamGreedy
	streamDraws // + job index: each job's P(altruism) draws
)

// Figure 2 of the paper (docs/carbyne.md): one machine of one resource, capacity
// 1.0 (1000 milli-CPU), two jobs at t=0.
func fig2Workload() workload {
	cpus := func(n int64) protocol.Resources { return protocol.Scalars(map[string]int64{protocol.ResCPUs: n}) }
	j1 := []altruism.StageSpec{
		{Name: "S0", Tasks: 2, Demand: cpus(40), Duration: time.Second},
		{Name: "S1", Tasks: 3, Demand: cpus(210), Duration: time.Second},
		{Name: "S2", Tasks: 1, Demand: cpus(200), Duration: 100 * time.Millisecond, Parents: []string{"S0", "S1"}},
	}
	j2 := []altruism.StageSpec{{Name: "S0", Tasks: 2, Demand: cpus(290), Duration: time.Second}}
	return workload{
		machines: 1,
		machine:  cpus(1000),
		jobs: []jobSpec{
			{name: "J1", stages: j1, estimates: j1},
			{name: "J2", stages: j2, estimates: j2},
		},
	}
}

// Machines of the tpcds workload (docs/carbyne.md): 20 cores and 128 GB each.
const (
	tpcdsMachineCPUs = 20 * 1000
	tpcdsMachineMem  = 128 * 1024
)

// tpcdsWorkload draws n synthetic DAG jobs shaped like docs/carbyne.md's common
// setup (Table 1's TPC-DS row): stages per job lognormal with median 8 and
// 95th percentile 23; 1 to 4 barriers (stages with several parents),
// median 1; a critical path of median 5 stages; durations of 5 s to 4 min.
// Every draw comes from seed, so a seed names one workload.
func tpcdsWorkload(n int, seed uint64, offline bool, meanArrival time.Duration) []jobSpec {
	dag := rand.New(rand.NewPCG(seed, streamDAG))
	arr := rand.New(rand.NewPCG(seed, streamArrivals))
	jobs := make([]jobSpec, n)
	var at time.Duration
	for i := range jobs {
		if i > 0 && !offline {
			// Poisson arrivals, on whole seconds like every other event.
			gap := arr.ExpFloat64() * meanArrival.Seconds()
			at += time.Duration(math.Round(gap)) * time.Second
		}
		stages := tpcdsJob(dag)
		jobs[i] = jobSpec{name: fmt.Sprintf("J%d", i+1), arrival: at, stages: stages, estimates: stages}
	}
	return jobs
}

// tpcdsJob draws one job's stages. The DAG is layered: every stage below
// the first level has a parent one level up, so the critical path has as
// many stages as there are levels; barriers get extra parents from
// earlier levels.
func tpcdsJob(rng *rand.Rand) []altruism.StageSpec {
	n := clampInt(int(math.Round(math.Exp(math.Log(8)+0.642*rng.NormFloat64()))), 2, 40)
	depth := clampInt(int(math.Round(math.Exp(math.Log(5)+0.3*rng.NormFloat64()))), 2, n)
	// Each level holds at least one stage; the rest are spread at random.
	level := make([]int, n)
	for i := range depth {
		level[i] = i
	}
	for i := depth; i < n; i++ {
		level[i] = rng.IntN(depth)
	}
	slices.Sort(level)
	byLevel := make([][]int, depth)
	for i, l := range level {
		byLevel[l] = append(byLevel[l], i)
	}
	parents := make([][]int, n)
	for i, l := range level {
		if l > 0 {
			up := byLevel[l-1]
			parents[i] = []int{up[rng.IntN(len(up))]}
		}
	}
	// Barriers: P(1) = .55, P(2) = .2, P(3) = .15, P(4) = .1, as many as
	// there are stages that can take a second parent.
	want := 1
	switch u := rng.Float64(); {
	case u >= 0.9:
		want = 4
	case u >= 0.75:
		want = 3
	case u >= 0.55:
		want = 2
	}
	var cands []int
	for i, l := range level {
		if l > 0 && countBelow(level, l) >= 2 {
			cands = append(cands, i)
		}
	}
	rng.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
	for _, i := range cands[:min(want, len(cands))] {
		for {
			p := rng.IntN(countBelow(level, level[i]))
			if !slices.Contains(parents[i], p) {
				parents[i] = append(parents[i], p)
				break
			}
		}
	}

	stages := make([]altruism.StageSpec, n)
	for i := range stages {
		lo, hi := 2.0, 100.0
		if level[i] == 0 {
			lo, hi = 16, 240 // input stages scan the data: the most tasks
		}
		cores := int64(1)
		switch u := rng.Float64(); {
		case u >= 0.85:
			cores = 4
		case u >= 0.5:
			cores = 2
		}
		memGB := math.Round(2*logUniform(rng, 1, 16)) / 2
		st := altruism.StageSpec{
			Name:  fmt.Sprintf("S%d", i),
			Tasks: int(math.Round(logUniform(rng, lo, hi))),
			Demand: protocol.Scalars(map[string]int64{
				protocol.ResCPUs: cores * 1000,
				protocol.ResMem:  int64(memGB * 1024),
			}),
			Duration: time.Duration(math.Round(logUniform(rng, 5, 240))) * time.Second,
		}
		for _, p := range parents[i] {
			st.Parents = append(st.Parents, fmt.Sprintf("S%d", p))
		}
		stages[i] = st
	}
	return stages
}

// countBelow returns how many stages sit on levels above l (their indices
// are 0..count-1, since stages are sorted by level).
func countBelow(level []int, l int) int {
	n := 0
	for _, x := range level {
		if x < l {
			n++
		}
	}
	return n
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
}

func clampInt(x, lo, hi int) int { return max(lo, min(hi, x)) }

// markGreedy makes round(fraction·n) jobs, picked by seed, never
// altruistic.
func markGreedy(jobs []jobSpec, fraction float64, seed uint64) {
	k := int(math.Round(fraction * float64(len(jobs))))
	if k <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(seed, streamGreedy))
	for _, i := range rng.Perm(len(jobs))[:min(k, len(jobs))] {
		jobs[i].greedy = true
	}
}

// estimateUnit is what misestimated durations are rounded to, so that
// plan timers fall on a coarse grid of instants.
const estimateUnit = 100 * time.Millisecond

// misestimate makes the planner's estimates of every job off by x percent:
// demands and durations are (1 + x/100) times the true ones (docs/carbyne.md,
// A8), durations rounded to estimateUnit. Execution still uses the true
// values.
func misestimate(jobs []jobSpec, x float64) {
	if x == 0 {
		return
	}
	f := 1 + x/100
	for i := range jobs {
		est := slices.Clone(jobs[i].stages)
		for k := range est {
			scaled := map[string]int64{}
			for name, v := range est[k].Demand.Scalars {
				scaled[name] = max(1, int64(math.Round(float64(v)*f)))
			}
			est[k].Demand = protocol.Scalars(scaled)
			d := float64(est[k].Duration) * f
			est[k].Duration = max(estimateUnit, time.Duration(math.Round(d/float64(estimateUnit)))*estimateUnit)
		}
		jobs[i].estimates = est
		jobs[i].misestimated = true
	}
}
