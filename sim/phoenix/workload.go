package phoenix

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/allot-project/allot/protocol"
)

// Synthetic Google-, Cloudera- and Yahoo-like traces (docs/phoenix.md: about 90%
// short jobs, heavy-tailed task counts and durations, bursty arrivals, the
// per-trace cutoffs and big partitions) with constraints of the kinds of
// the Phoenix paper's Table II on a share of jobs.

// spanLongs is how many median long-task durations a trace spans.
const spanLongs = 12

// shortSigma is the spread (lognormal sigma) of short jobs' mean task
// durations.
const shortSigma = 0.5

// traceShape is one trace family's shape.
type traceShape struct {
	cutoff      float64 // short/long cutoff on mean task duration, s
	big         float64 // share of workers long jobs may use
	shortFrac   float64
	shortTasks  [2]float64 // lognormal median and sigma of task counts
	longTasks   [2]float64
	shortDur    float64 // median mean task duration over the cutoff
	longDur     float64
	load        float64 // default offered load
	constrained float64 // default share of constrained jobs
}

var traceShapes = map[string]traceShape{
	"google": {cutoff: 1129.532, big: 0.83, shortFrac: 0.90, shortTasks: [2]float64{6, 1.3},
		longTasks: [2]float64{60, 1.2}, shortDur: 0.05, longDur: 2.5, load: 0.85, constrained: 0.35},
	"cloudera": {cutoff: 272.783, big: 0.91, shortFrac: 0.92, shortTasks: [2]float64{8, 1.3},
		longTasks: [2]float64{80, 1.2}, shortDur: 0.05, longDur: 3, load: 0.85, constrained: 0.35},
	"yahoo": {cutoff: 90.5811, big: 0.98, shortFrac: 0.91, shortTasks: [2]float64{10, 1.2},
		longTasks: [2]float64{50, 1.1}, shortDur: 0.15, longDur: 3, load: 0.85, constrained: 0.39},
}

// Traces lists the trace names.
func Traces() []string { return []string{"google", "cloudera", "yahoo"} }

// constraintKind is one constraint kind of Table II with the predicate the traces
// draw.
type constraintKind struct {
	name   string
	c      protocol.Constraint
	weight float64 // relative frequency among constrained jobs
}

func newConstraint(attr string, op protocol.Op, v string, soft bool) protocol.Constraint {
	return protocol.Constraint{Attribute: attr, Op: op, Value: v, Soft: soft}
}

// constraintKinds are the nine kinds of the Phoenix paper's Table II; eth_gbps and clock_mhz are
// soft, as the paper's examples of soft constraints.
var constraintKinds = []constraintKind{
	{"arch", newConstraint("arch", protocol.OpEq, "arm64", false), 1.4},
	{"numa_nodes", newConstraint("numa_nodes", protocol.OpGe, "4", false), 1.3},
	{"eth_gbps", newConstraint("eth_gbps", protocol.OpGe, "25", true), 1.3},
	{"cores", newConstraint("cores", protocol.OpGe, "32", false), 1.3},
	{"max_disks", newConstraint("disks", protocol.OpLe, "1", false), 1.0},
	{"kernel", newConstraint("kernel", protocol.OpGe, "5.4", false), 1.0},
	{"platform", newConstraint("platform", protocol.OpEq, "P3", false), 1.0},
	{"clock_mhz", newConstraint("clock_mhz", protocol.OpGe, "3000", true), 1.0},
	{"min_disks", newConstraint("disks", protocol.OpGe, "2", false), 0.6},
}

// machineType is one hardware generation: workers come from a few
// generations, so attributes are correlated as in a real fleet and
// intersections of constraints are not vanishingly small. frac is the share
// of workers, target the share of constrained jobs written for it (A0
// calibrates both). Supplies that follow: arm64 6%, numa_nodes >= 4 13%,
// eth_gbps >= 25 19%, cores >= 32 24%, disks <= 1 16%, kernel >= 5.4 24%,
// platform P3 13%, clock_mhz >= 3000 16%, disks >= 2 84%.
type machineType struct {
	frac, target float64
	attrs        [8]string // arch numa_nodes eth_gbps cores disks kernel platform clock_mhz
}

var machineAttrKeys = [8]string{"arch", "numa_nodes", "eth_gbps", "cores", "disks", "kernel", "platform", "clock_mhz"}

var machineTypes = []machineType{
	{0.30, 0.10, [8]string{"x86_64", "2", "10", "16", "4", "4.15", "P1", "2400"}},
	{0.22, 0.05, [8]string{"x86_64", "1", "10", "8", "2", "4.4", "P1", "2600"}},
	{0.14, 0.05, [8]string{"x86_64", "2", "1", "16", "8", "3.10", "P2", "2000"}},
	{0.10, 0.05, [8]string{"x86_64", "2", "10", "16", "12", "4.15", "P2", "2400"}},
	{0.08, 0.20, [8]string{"x86_64", "4", "25", "32", "2", "5.4", "P3", "2600"}},
	{0.06, 0.20, [8]string{"arm64", "1", "25", "64", "1", "5.15", "P4", "3000"}},
	{0.05, 0.15, [8]string{"x86_64", "4", "40", "64", "0", "5.15", "P3", "3400"}},
	{0.05, 0.20, [8]string{"x86_64", "2", "10", "32", "1", "5.4", "P2", "3000"}},
}

// attributes returns the machine type's attributes.
func (m machineType) attributes() protocol.Attributes {
	a := protocol.Attributes{}
	for i, k := range machineAttrKeys {
		if k == "kernel" {
			a[k] = protocol.Text(m.attrs[i]) // a version, compared by components
		} else {
			a[k] = protocol.ParseValue(m.attrs[i])
		}
	}
	return a
}

// workerAttrs draws every worker's machine type.
func workerAttrs(n int, rng *rand.Rand) []protocol.Attributes {
	types := make([]protocol.Attributes, len(machineTypes))
	fracs := make([]float64, len(machineTypes))
	for i, m := range machineTypes {
		types[i], fracs[i] = m.attributes(), m.frac
	}
	out := make([]protocol.Attributes, n)
	for w := range out {
		a := maps.Clone(types[pickIndex(rng, fracs)])
		a["rack"] = protocol.Text("r" + strconv.Itoa(w/40))
		out[w] = a
	}
	return out
}

func pickIndex(rng *rand.Rand, probs []float64) int {
	x := rng.Float64()
	for i, p := range probs {
		if x < p {
			return i
		}
		x -= p
	}
	return len(probs) - 1
}

// jobSpec is one job of a trace.
type jobSpec struct {
	submit float64
	durs   []float64
	est    float64 // mean task duration (the MEAN estimator)
	long   bool
	cons   []protocol.Constraint
}

// generate draws a trace of cfg.Jobs jobs and scales arrivals so that the
// offered work is cfg.Load of the cluster's capacity.
func generate(cfg Config, rng *rand.Rand) []jobSpec {
	t := traceShapes[cfg.Trace]
	jobs := make([]jobSpec, cfg.Jobs)
	counts := make([]float64, cfg.Jobs) // negative for long jobs
	means := make([]float64, cfg.Jobs)
	var shortWork, longWork float64
	for i := range jobs {
		long := rng.Float64() >= t.shortFrac
		tasks, dur := t.shortTasks, t.shortDur
		if long {
			tasks, dur = t.longTasks, t.longDur
		}
		m := tasks[0] * math.Exp(tasks[1]*rng.NormFloat64())
		sigma := shortSigma
		if long {
			sigma = 0.8
		}
		mean := dur * t.cutoff * math.Exp(sigma*rng.NormFloat64())
		if long {
			mean = max(mean, 1.2*t.cutoff)
			longWork += m * mean
			m = -m
		} else {
			mean = min(max(mean, 0.2), 0.8*t.cutoff)
			shortWork += m * mean
		}
		counts[i], means[i] = m, mean
		if rng.Float64() < cfg.Constrained {
			jobs[i].cons = drawConstraints(rng)
		}
	}
	// Task counts are scaled twice: long jobs' so that they bring the big
	// partition's share of the work (docs/phoenix.md sizes the partition so),
	// and everyone's so that the trace spans spanLongs median long-task
	// durations at the target load, long enough for long work to reach a
	// steady state on this many workers.
	scaleLong, scale := 1.0, 1.0
	if longWork > 0 && shortWork > 0 {
		scaleLong = shortWork * t.big / (1 - t.big) / longWork
	}
	if total := shortWork + longWork*scaleLong; total > 0 {
		scale = cfg.Load * float64(cfg.Workers) * spanLongs * t.longDur * t.cutoff / total
	}
	// Task durations come from one stream per job, so that the same seed
	// gives the same jobs at every load and cluster size (only the task
	// counts and the arrival times scale).
	base := rng.Uint64()
	work := 0.0
	for i := range jobs {
		j := &jobs[i]
		jr := rand.New(rand.NewPCG(base, uint64(i)))
		m := counts[i] * scale
		if m < 0 {
			m = -m * scaleLong
		}
		n := min(max(int(math.Round(m)), 1), max(cfg.Workers/2, 1))
		j.durs = make([]float64, n)
		sum := 0.0
		for k := range j.durs {
			j.durs[k] = means[i] * math.Exp(0.4*jr.NormFloat64()-0.08)
			sum += j.durs[k]
		}
		j.est = sum / float64(n)
		j.long = j.est >= t.cutoff
		work += sum
	}
	// Bursty arrivals: a two-state modulated Poisson process, bursts at 4x
	// the calm rate a fifth of the time, scaled to the target load.
	span := work / (cfg.Load * float64(cfg.Workers))
	rate := float64(cfg.Jobs) / span // mean jobs per second
	calm, burst := rate/(0.8+0.2*4), 4*rate/(0.8+0.2*4)
	phaseMean := span / 40
	now, inBurst := 0.0, false
	phaseEnd := rng.ExpFloat64() * phaseMean
	for i := range jobs {
		r := calm
		if inBurst {
			r = burst
		}
		now += rng.ExpFloat64() / r
		for now > phaseEnd {
			inBurst = !inBurst
			if inBurst {
				phaseEnd += rng.ExpFloat64() * phaseMean / 4
			} else {
				phaseEnd += rng.ExpFloat64() * phaseMean
			}
		}
		jobs[i].submit = now
	}
	return jobs
}

// drawConstraints draws one or two constraints of distinct attributes
// that the machine type the job targets satisfies, so every job is feasible.
func drawConstraints(rng *rand.Rand) []protocol.Constraint {
	targets := make([]float64, len(machineTypes))
	for i, m := range machineTypes {
		targets[i] = m.target
	}
	attrs := machineTypes[pickIndex(rng, targets)].attributes()
	var kinds []constraintKind
	total := 0.0
	for _, k := range constraintKinds {
		if k.c.Holds(attrs) {
			kinds = append(kinds, k)
			total += k.weight
		}
	}
	n := 1
	if rng.Float64() < 0.2 {
		n = 2
	}
	var out []protocol.Constraint
	for range 8 {
		if len(out) == n || len(kinds) == 0 {
			break
		}
		x := rng.Float64() * total
		i := 0
		for ; i < len(kinds)-1 && x >= kinds[i].weight; i++ {
			x -= kinds[i].weight
		}
		c := kinds[i].c
		if slices.ContainsFunc(out, func(o protocol.Constraint) bool { return o.Attribute == c.Attribute }) {
			continue
		}
		out = append(out, c)
	}
	return out
}
