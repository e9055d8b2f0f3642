package pack

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/internal/heapq"
)

// DefaultSpeedup is the default factor by which a replay compresses the
// trace's times: openb's five months become about ten minutes of the clock
// placers see.
const DefaultSpeedup = 20000

// ReplayConfig describes replays of the trace's own timeline: every policy
// on every seed (only seeded policies differ between seeds).
type ReplayConfig struct {
	Nodes []Node
	Trace []Pod
	Seeds []uint64
	// Speedup divides the trace's times into the clock passed to placers.
	Speedup float64
	// Workers bounds the runs executing at once (0: GOMAXPROCS).
	Workers int
	// Labels for the report: where the pods and nodes came from.
	PodsName, NodesName string
}

// ReplayReport is the outcome of RunReplay: per policy, its metrics
// averaged over seeds, and each run's.
type ReplayReport struct {
	Header
	Speedup  float64        `json:"speedup"`
	Policies []ReplayResult `json:"policies"`
}

// ReplayResult is one policy's metrics, means over seeds.
type ReplayResult struct {
	Policy      string      `json:"policy"`
	Waited      float64     `json:"waited"`
	MeanWait    float64     `json:"mean_wait_s"`
	MaxWait     float64     `json:"max_wait_s"`
	NeverPlaced float64     `json:"never_placed"`
	Runs        []ReplayRun `json:"runs"`
}

// ReplayRun is one replay of one policy on one seed. Waits are in trace
// seconds, over the pods that waited and were placed in the end.
type ReplayRun struct {
	Seed uint64 `json:"seed"`
	// Waited counts the pods that could not be placed on arrival.
	Waited      int     `json:"waited"`
	MeanWait    float64 `json:"mean_wait_s"`
	MaxWait     float64 `json:"max_wait_s"`
	NeverPlaced int     `json:"never_placed"`
}

// RunReplay replays the trace's timeline: a pod arrives at its creation time
// and, once placed, departs after its run time (see runTime). Pods that
// cannot be placed wait in FIFO order. At every event time the harness first
// removes the departing pods, then retries the waiting ones in order, then
// offers the arrivals.
func RunReplay(cfg ReplayConfig, policies []Policy) (*ReplayReport, error) {
	if len(cfg.Seeds) == 0 || len(policies) == 0 {
		return nil, errors.New("replay: need at least one seed and one policy")
	}
	if !(cfg.Speedup > 0) {
		return nil, fmt.Errorf("replay: speed-up %v, want more than 0", cfg.Speedup)
	}
	// Arrival order: creation time, then trace order.
	workload := numberPods(slices.SortedStableFunc(slices.Values(cfg.Trace), func(a, b Pod) int {
		return cmp.Compare(a.Created, b.Created)
	}))
	runs := make([]ReplayRun, len(policies)*len(cfg.Seeds))
	err := forEach(len(runs), cfg.Workers, func(i int) error {
		pol, seed := policies[i/len(cfg.Seeds)], cfg.Seeds[i%len(cfg.Seeds)]
		run, err := replayRun(pol, cfg.Nodes, workload, seed, cfg.Speedup)
		runs[i] = run
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r := &ReplayReport{Header: header("replay", cfg.PodsName, cfg.NodesName, cfg.Nodes, cfg.Trace, cfg.Seeds), Speedup: cfg.Speedup}
	for p, pol := range policies {
		r.Policies = append(r.Policies, averageReplay(pol.Name, runs[p*len(cfg.Seeds):(p+1)*len(cfg.Seeds)]))
	}
	return r, nil
}

// runTime is how long a placed pod runs, in trace seconds: from its
// scheduled time (its creation time if the trace never scheduled it) to its
// deletion time. It reports false for a pod that stays: no deletion time, or
// one before the start.
func runTime(p *Pod) (int64, bool) {
	start := p.Scheduled
	if start == NoTime {
		start = p.Created
	}
	if p.Deleted == NoTime || p.Deleted < start {
		return 0, false
	}
	return p.Deleted - start, true
}

// replayRun replays workload (sorted by creation time) under one policy.
func replayRun(policy Policy, nodes []Node, workload []Pod, seed uint64, speedup float64) (ReplayRun, error) {
	run := ReplayRun{Seed: seed}
	h, err := newHarness(policy, nodes, workload, seed)
	if err != nil {
		return run, err
	}
	clock := func(t int64) time.Duration { return time.Duration(float64(t) * float64(time.Second) / speedup) }
	var (
		departures = heapq.New(earlierDeparture)
		pushed     int // departures pushed, to order those at the same time
		waiting    []int
		placed     int   // pods placed after waiting
		waitSum    int64 // their waits, in trace seconds
		next       int   // the next pod to arrive
	)
	// start places pod i at trace time t, reporting whether it could.
	start := func(i int, t int64) (bool, error) {
		ok, err := h.place(clock(t), i)
		if !ok || err != nil {
			return false, err
		}
		if d, ok := runTime(&workload[i]); ok {
			departures.Push(departure{at: t + d, seq: pushed, pod: i})
			pushed++
		}
		return true, nil
	}
	for next < len(workload) || departures.Len() > 0 {
		t := int64(-1)
		if next < len(workload) {
			t = workload[next].Created
		}
		if d, ok := departures.Peek(); ok && (t < 0 || d.at < t) {
			t = d.at
		}
		now := clock(t)
		for d, ok := departures.Peek(); ok && d.at == t; d, ok = departures.Peek() {
			departures.Pop()
			if err := h.remove(now, d.pod); err != nil {
				return run, err
			}
		}
		still := waiting[:0]
		for _, i := range waiting {
			ok, err := start(i, t)
			if err != nil {
				return run, err
			}
			if !ok {
				still = append(still, i)
				continue
			}
			wait := t - workload[i].Created
			placed++
			waitSum += wait
			run.MaxWait = max(run.MaxWait, float64(wait))
		}
		waiting = still
		for ; next < len(workload) && workload[next].Created == t; next++ {
			ok, err := start(next, t)
			if err != nil {
				return run, err
			}
			if !ok {
				waiting = append(waiting, next)
				run.Waited++
			}
		}
	}
	run.NeverPlaced = len(waiting)
	if placed > 0 {
		run.MeanWait = float64(waitSum) / float64(placed)
	}
	return run, nil
}

// departure is a placed pod's end; seq orders departures at the same time by
// when they were scheduled, so that replays are deterministic.
type departure struct {
	at  int64
	seq int
	pod int
}

// earlierDeparture orders departures by time, then by the order they were
// pushed.
func earlierDeparture(a, b departure) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// averageReplay sums up one policy's runs.
func averageReplay(policy string, runs []ReplayRun) ReplayResult {
	r := ReplayResult{Policy: policy, Runs: runs}
	n := float64(len(runs))
	for _, run := range runs {
		r.Waited += float64(run.Waited) / n
		r.MeanWait += run.MeanWait / n
		r.MaxWait += run.MaxWait / n
		r.NeverPlaced += float64(run.NeverPlaced) / n
	}
	return r
}
