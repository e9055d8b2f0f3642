package offers

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// The allocator acceptance test of the Phoenix issue: a cluster where 10%
// of the agents carry a scarce attribute and two frameworks compete, one
// needing that attribute. Run with and without CRV steering from the same
// seed, the constrained framework's tasks must wait far less with it, the
// other framework's throughput must not drop, and the frameworks' H-DRF
// shares must stay the same.

// crvSimResult is what one run of crvSim measured.
type crvSimResult struct {
	meanWait, p95Wait map[string]time.Duration // per framework, launched tasks
	launched          map[string]int
	meanShare         map[string]float64 // dominant share, averaged over rounds
	violations        int                // units offered on agents breaking a hard constraint
}

// crvSimFramework is one framework of the simulation: a FIFO queue of task
// arrival times, the task shape and a duration draw.
type crvSimFramework struct {
	id       string
	demand   Demand
	queue    []time.Duration // arrival times of waiting tasks
	duration func(r *rand.Rand) time.Duration
	waits    []time.Duration
}

type crvSimTask struct {
	fw    *crvSimFramework
	agent protocol.AgentID
	end   time.Duration
}

// crvSim runs the scenario for horizon with CRV steering on or off:
//
//   - 100 agents of 8 CPUs and 32 GiB; every tenth has gpu=a100;
//   - "ml" needs gpu == a100: a job of 60 tasks (1 CPU, 2 GiB, 15 s each)
//     arrives every 30 s, so it can fill 75% of the GPU agents;
//   - "batch" has no constraint: tasks of 1 CPU, 2 GiB and 10-30 s arrive
//     at random, 2.4 a round on average (about 60% of the cluster busy);
//   - every 100 ms each framework declares its queue, the round runs, and
//     each framework launches from its offers as many queued tasks as they
//     were sized for, oldest first; tasks end after their duration.
func crvSim(t *testing.T, crv bool, horizon time.Duration) crvSimResult {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DisableCRV = !crv
	cfg.OfferTimeout = 0
	a := newAlloc(t, cfg)
	for i := 0; i < 100; i++ {
		var attrs protocol.Attributes
		if i%10 == 0 {
			attrs = protocol.Attributes{"gpu": protocol.Text("a100")}
		}
		addAgent(t, a, fmt.Sprintf("a%02d", i), cpuMem(8000, 32768), attrs)
	}
	gpu := []protocol.Constraint{{Attribute: "gpu", Op: protocol.OpEq, Value: "a100"}}
	ml := &crvSimFramework{id: "ml", demand: Demand{Resources: cpuMem(1000, 2048), Constraints: gpu},
		duration: func(*rand.Rand) time.Duration { return 15 * time.Second }}
	batch := &crvSimFramework{id: "batch", demand: Demand{Resources: cpuMem(1000, 2048)},
		duration: func(r *rand.Rand) time.Duration { return time.Duration(10_000+r.IntN(20_001)) * time.Millisecond }}
	fws := []*crvSimFramework{ml, batch}
	byID := map[protocol.FrameworkID]*crvSimFramework{}
	for _, f := range fws {
		addFw(t, a, f.id, f.id)
		byID[protocol.FrameworkID(f.id)] = f
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var running []crvSimTask
	res := crvSimResult{meanShare: map[string]float64{}}
	rounds := 0
	for now := time.Duration(0); now < horizon; now += 100 * time.Millisecond {
		// Arrivals.
		if now%(30*time.Second) == 0 {
			for i := 0; i < 60; i++ {
				ml.queue = append(ml.queue, now)
			}
		}
		for n := rng.IntN(5) + rng.IntN(2); n > 0; n-- { // mean 2.5 a round
			batch.queue = append(batch.queue, now)
		}
		// Completions.
		running = slices.DeleteFunc(running, func(x crvSimTask) bool {
			if x.end > now {
				return false
			}
			must(t, a.Recover(protocol.FrameworkID(x.fw.id), x.agent, x.fw.demand.Resources))
			return true
		})
		for _, f := range fws {
			d := f.demand
			d.Count = int64(len(f.queue))
			demand(t, a, f.id, d)
		}
		dec := a.Allocate(at(now))
		for _, o := range dec.Offers {
			f := byID[o.FrameworkID]
			n := min(int(o.Tasks), len(f.queue))
			res.violations += crvViolations(a, o)
			tasks := make([]protocol.Resources, n)
			for i := range tasks {
				tasks[i] = f.demand.Resources
			}
			if n == 0 {
				must(t, a.Decline(o.FrameworkID, []protocol.OfferID{o.ID}, 0, at(now)))
				continue
			}
			if _, err := a.Accept(o.FrameworkID, []protocol.OfferID{o.ID}, tasks, at(now)); err != nil {
				t.Fatalf("accept %s: %v", o.ID, err)
			}
			for _, arrived := range f.queue[:n] {
				f.waits = append(f.waits, now-arrived)
				running = append(running, crvSimTask{fw: f, agent: o.AgentID, end: now + f.duration(rng)})
			}
			f.queue = f.queue[n:]
		}
		for _, f := range fws {
			_, s, err := a.FrameworkShares(protocol.FrameworkID(f.id))
			must(t, err)
			res.meanShare[f.id] += s
		}
		rounds++
	}
	res.meanWait, res.p95Wait, res.launched = map[string]time.Duration{}, map[string]time.Duration{}, map[string]int{}
	for _, f := range fws {
		res.meanShare[f.id] /= float64(rounds)
		res.launched[f.id] = len(f.waits)
		if len(f.waits) == 0 {
			continue
		}
		var sum time.Duration
		for _, w := range f.waits {
			sum += w
		}
		res.meanWait[f.id] = sum / time.Duration(len(f.waits))
		slices.Sort(f.waits)
		res.p95Wait[f.id] = f.waits[len(f.waits)*95/100]
	}
	return res
}

// crvViolations counts the task units of an offer sized for shapes whose
// hard constraints its agent does not satisfy.
func crvViolations(a *Allocator, o Offer) int {
	rec, _ := a.lookup(o.ID)
	n := 0
	for key, units := range rec.units {
		for _, s := range rec.fw.shapesOf(rec.kind) {
			if s.key != key {
				continue
			}
			if ok, _ := protocol.MatchHard(s.hard, rec.ag.info.Attributes); !ok {
				n += int(units)
			}
		}
	}
	return n
}

func TestCRV_scarceAttribute_acceptance(t *testing.T) {
	horizon := 10 * time.Minute
	if testing.Short() {
		horizon = 3 * time.Minute
	}
	off := crvSim(t, false, horizon)
	on := crvSim(t, true, horizon)
	for _, r := range []struct {
		name string
		res  crvSimResult
	}{{"without CRV", off}, {"with CRV", on}} {
		t.Logf("%s: ml wait mean %v p95 %v (%d launched); batch wait mean %v p95 %v (%d launched); mean shares ml %.4f batch %.4f",
			r.name, r.res.meanWait["ml"], r.res.p95Wait["ml"], r.res.launched["ml"],
			r.res.meanWait["batch"], r.res.p95Wait["batch"], r.res.launched["batch"],
			r.res.meanShare["ml"], r.res.meanShare["batch"])
		if r.res.violations != 0 {
			t.Errorf("%s: %d units offered against hard constraints", r.name, r.res.violations)
		}
	}
	// The constrained framework waits far less with CRV ordering.
	if on.meanWait["ml"]*4 > off.meanWait["ml"] || off.meanWait["ml"] < time.Second {
		t.Errorf("ml mean wait: %v with CRV, %v without; want at most a quarter, and a real wait without",
			on.meanWait["ml"], off.meanWait["ml"])
	}
	if on.p95Wait["ml"]*4 > off.p95Wait["ml"] {
		t.Errorf("ml p95 wait: %v with CRV, %v without; want at most a quarter", on.p95Wait["ml"], off.p95Wait["ml"])
	}
	// The other framework's throughput does not drop, nor does its wait grow.
	if on.launched["batch"] < off.launched["batch"] {
		t.Errorf("batch launched %d tasks with CRV, %d without", on.launched["batch"], off.launched["batch"])
	}
	if on.meanWait["batch"] > off.meanWait["batch"]+100*time.Millisecond {
		t.Errorf("batch mean wait %v with CRV, %v without", on.meanWait["batch"], off.meanWait["batch"])
	}
	// H-DRF shares are unchanged: every task arriving is served, so each
	// framework's time-averaged dominant share is the same either way.
	for _, fw := range []string{"ml", "batch"} {
		if d := on.meanShare[fw] - off.meanShare[fw]; d > 0.01 || d < -0.01 {
			t.Errorf("%s mean share %.4f with CRV, %.4f without", fw, on.meanShare[fw], off.meanShare[fw])
		}
	}
}
