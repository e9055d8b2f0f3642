package pack

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// FillTargetPercent is how much of the cluster's GPU capacity a fill run's
// arrivals request in all: the paper inflates the trace to 130%.
const FillTargetPercent = 130

// curvePoints are the arrived fractions, in tenths, at which a fill run
// records its allocation curve: 0.1, 0.2, ..., 1.3.
const curvePoints = FillTargetPercent / 10

// streamWorkload separates the workload's draws from the policies', which
// share the run's seed.
const streamWorkload = 0x776f726b6c6f6164 // "workload"

// FillConfig describes the runs of the paper's protocol: every policy on
// every seed.
type FillConfig struct {
	Nodes []Node
	Trace []Pod
	Seeds []uint64
	// Workers bounds the runs executing at once (0: GOMAXPROCS).
	Workers int
	// Labels for the report: where the pods and nodes came from.
	PodsName, NodesName string
}

// FillReport is the outcome of RunFill: per policy, its metrics averaged over
// seeds, and each run's.
type FillReport struct {
	Header
	Policies []FillResult `json:"policies"`
}

// Header says what a report ran: the mode, where the pods and nodes came
// from, the cluster's size and the seeds.
type Header struct {
	Mode      string   `json:"mode"`
	Pods      string   `json:"pods"`
	Nodes     string   `json:"nodes"`
	NodeCount int      `json:"node_count"`
	GPUs      float64  `json:"gpus"`
	TracePods int      `json:"trace_pods"`
	Seeds     []uint64 `json:"seeds"`
}

// header is the Header of a run of mode over nodes and trace.
func header(mode, pods, nodes string, nodeList []Node, trace []Pod, seeds []uint64) Header {
	return Header{Mode: mode, Pods: pods, Nodes: nodes, NodeCount: len(nodeList),
		GPUs: float64(GPUCapacity(nodeList)) / DeviceMilli, TracePods: len(trace), Seeds: seeds}
}

// FillResult is one policy's metrics, means over seeds. Fractions are of the
// cluster's GPU capacity.
type FillResult struct {
	Policy string `json:"policy"`
	// AllocAt100 is the GPU allocation ratio when the arrived requests first
	// reach 100% of capacity.
	AllocAt100 float64 `json:"alloc_at_100"`
	// FirstLossAt is the arrived fraction at which the GPU that failed to be
	// placed first reaches 1% of capacity.
	FirstLossAt float64      `json:"first_loss_at"`
	Arrivals    float64      `json:"arrivals"`
	Failed      float64      `json:"failed"`
	Curve       []CurvePoint `json:"curve"`
	Runs        []FillRun    `json:"runs"`
}

// FillRun is one run of one policy on one seed.
type FillRun struct {
	Seed        uint64       `json:"seed"`
	Arrivals    int          `json:"arrivals"`
	Failed      int          `json:"failed"`
	AllocAt100  float64      `json:"alloc_at_100"`
	FirstLossAt float64      `json:"first_loss_at"`
	Curve       []CurvePoint `json:"curve"`
}

// CurvePoint is the GPU allocation ratio when the arrived requests first
// reach Arrived (both fractions of capacity).
type CurvePoint struct {
	Arrived   float64 `json:"arrived"`
	Allocated float64 `json:"allocated"`
}

// FillWorkload is the arrival order of one fill run: the trace shuffled by
// seed, then pods drawn from it with replacement (same stream) until the GPU
// requested reaches FillTargetPercent of capacity. Pods get IDs 0..len-1.
func FillWorkload(trace []Pod, capacity int64, seed uint64) ([]Pod, error) {
	if capacity <= 0 {
		return nil, errors.New("the cluster has no GPU")
	}
	if GPURequestTotal(trace) == 0 {
		return nil, errors.New("the workload requests no GPU")
	}
	rng := rand.New(rand.NewPCG(seed, streamWorkload))
	pods := make([]Pod, 0, len(trace)*FillTargetPercent/100)
	var requested int64
	for _, i := range rng.Perm(len(trace)) {
		pods = append(pods, trace[i])
		requested += trace[i].GPURequest()
	}
	for requested*100 < capacity*FillTargetPercent {
		p := trace[rng.IntN(len(trace))]
		pods = append(pods, p)
		requested += p.GPURequest()
	}
	return numberPods(pods), nil
}

// RunFill runs the paper's protocol: for each seed, the seed's FillWorkload
// arrives one pod at a time, nothing departs, and a pod its policy cannot
// place on arrival fails. Runs execute in parallel; the report does not
// depend on how.
func RunFill(cfg FillConfig, policies []Policy) (*FillReport, error) {
	if len(cfg.Seeds) == 0 || len(policies) == 0 {
		return nil, errors.New("fill: need at least one seed and one policy")
	}
	capacity := GPUCapacity(cfg.Nodes)
	workloads := make([][]Pod, len(cfg.Seeds))
	for s, seed := range cfg.Seeds {
		w, err := FillWorkload(cfg.Trace, capacity, seed)
		if err != nil {
			return nil, fmt.Errorf("fill: %w", err)
		}
		workloads[s] = w
	}
	runs := make([]FillRun, len(policies)*len(cfg.Seeds))
	err := forEach(len(runs), cfg.Workers, func(i int) error {
		pol, s := policies[i/len(cfg.Seeds)], i%len(cfg.Seeds)
		run, err := fillRun(pol, cfg.Nodes, workloads[s], cfg.Seeds[s])
		runs[i] = run
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	r := &FillReport{Header: header("fill", cfg.PodsName, cfg.NodesName, cfg.Nodes, cfg.Trace, cfg.Seeds)}
	for p, pol := range policies {
		r.Policies = append(r.Policies, averageFill(pol.Name, runs[p*len(cfg.Seeds):(p+1)*len(cfg.Seeds)]))
	}
	return r, nil
}

// fillRun runs one policy on one workload and measures it from the
// harness's state.
func fillRun(policy Policy, nodes []Node, workload []Pod, seed uint64) (FillRun, error) {
	run := FillRun{Seed: seed, Arrivals: len(workload), AllocAt100: -1, FirstLossAt: -1}
	h, err := newHarness(policy, nodes, workload, seed)
	if err != nil {
		return run, err
	}
	capacity := h.cluster.CapacityGPU()
	var requested int64
	for i := range workload {
		requested += workload[i].GPURequest()
		ok, err := h.place(0, i)
		if err != nil {
			return run, err
		}
		if !ok {
			run.Failed++
		}
		allocated := h.cluster.AllocatedGPU()
		ratio := float64(allocated) / float64(capacity)
		for len(run.Curve) < curvePoints && requested*10 >= int64(len(run.Curve)+1)*capacity {
			run.Curve = append(run.Curve, CurvePoint{Arrived: float64(len(run.Curve)+1) / 10, Allocated: ratio})
		}
		if run.AllocAt100 < 0 && requested >= capacity {
			run.AllocAt100 = ratio
		}
		if run.FirstLossAt < 0 && (requested-allocated)*100 >= capacity {
			run.FirstLossAt = float64(requested) / float64(capacity)
		}
	}
	return run, nil
}

// averageFill sums up one policy's runs.
func averageFill(policy string, runs []FillRun) FillResult {
	r := FillResult{Policy: policy, Runs: runs, Curve: make([]CurvePoint, curvePoints)}
	n := float64(len(runs))
	for _, run := range runs {
		r.AllocAt100 += run.AllocAt100 / n
		r.FirstLossAt += run.FirstLossAt / n
		r.Arrivals += float64(run.Arrivals) / n
		r.Failed += float64(run.Failed) / n
		for k, pt := range run.Curve {
			r.Curve[k].Allocated += pt.Allocated / n
		}
	}
	for k := range r.Curve {
		r.Curve[k].Arrived = float64(k+1) / 10
	}
	return r
}
