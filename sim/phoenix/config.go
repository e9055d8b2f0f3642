package phoenix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadSimulation reports a Phoenix simulation that cannot run as configured.
var ErrBadSimulation = errors.New("bad phoenix simulation")

// Schedulers of the Phoenix simulator.
const (
	SchedHawkC   = "hawk-c"
	SchedEagleC  = "eagle-c"
	SchedYaqD    = "yaq-d"
	SchedPhoenix = "phoenix"
	SchedEagle   = "eagle" // Eagle with every constraint ignored
)

// Schedulers lists the scheduler names.
func Schedulers() []string {
	return []string{SchedHawkC, SchedEagleC, SchedYaqD, SchedPhoenix, SchedEagle}
}

// Config configures one run.
type Config struct {
	Trace     string  `json:"trace"` // google, cloudera or yahoo
	Scheduler string  `json:"scheduler"`
	Seed      uint64  `json:"seed"`
	Workers   int     `json:"workers"`
	Jobs      int     `json:"jobs"`
	Load      float64 `json:"load"` // offered work over capacity; 0: the trace's default
	// Constrained is the share of jobs that carry constraints; negative:
	// the trace's default.
	Constrained float64 `json:"constrained"`

	// Phoenix's switches (docs/phoenix.md), on by default; with all four off
	// Phoenix makes Eagle-C's decisions (invariant 3).
	NoReorder   bool `json:"no_reorder,omitempty"`   // CRV-based queue reordering
	NoNegotiate bool `json:"no_negotiate,omitempty"` // soft-constraint negotiation
	NoPrefer    bool `json:"no_prefer,omitempty"`    // probe relaxed-satisfying workers first
	NoPartition bool `json:"no_partition,omitempty"` // shape the short-only partition by short demand
	// CRVSampling (CRV_AWARE_SAMPLING, docs/phoenix.md; off by default) makes the
	// probes of jobs needing no contended class avoid workers that supply
	// one.
	CRVSampling bool `json:"crv_sampling,omitempty"`
	// Weighted orders a queue in CRV mode by the single score
	// R(job) - BETA x W ascending (docs/phoenix.md, ORDER = WEIGHTED) instead of
	// the default lexicographic order (contended first, then longer class
	// wait, then SRPT, then FIFO).
	Weighted bool `json:"weighted,omitempty"`

	// SoftPenalty multiplies a task's runtime on a worker that misses one of
	// its relaxed soft constraints (SOFT_PENALTY, default 1).
	SoftPenalty float64 `json:"soft_penalty,omitempty"`
}

// DefaultConfig is the Google-like trace on 15,000 workers under
// Phoenix.
func DefaultConfig() Config {
	return Config{Trace: "google", Scheduler: SchedPhoenix, Seed: 1, Workers: 15000,
		Jobs: 20000, Constrained: -1, SoftPenalty: 1}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if _, ok := traceShapes[c.Trace]; !ok {
		return fmt.Errorf("%w: trace %q (want one of %s)", ErrBadSimulation, c.Trace, strings.Join(Traces(), ", "))
	}
	if !slices.Contains(Schedulers(), c.Scheduler) {
		return fmt.Errorf("%w: scheduler %q (want one of %s)", ErrBadSimulation, c.Scheduler, strings.Join(Schedulers(), ", "))
	}
	if c.Workers < 10 || c.Workers > 200000 {
		return fmt.Errorf("%w: workers %d (want 10 to 200000)", ErrBadSimulation, c.Workers)
	}
	if c.Jobs < 1 || c.Jobs > 2000000 {
		return fmt.Errorf("%w: jobs %d (want 1 to 2000000)", ErrBadSimulation, c.Jobs)
	}
	if c.Load < 0 || c.Load > 2 {
		return fmt.Errorf("%w: load %v (want 0 for the default, or up to 2)", ErrBadSimulation, c.Load)
	}
	if c.Constrained > 1 {
		return fmt.Errorf("%w: constrained share %v (want at most 1; negative for the default)", ErrBadSimulation, c.Constrained)
	}
	if c.SoftPenalty < 0 {
		return fmt.Errorf("%w: soft penalty %v (want >= 1, or 0 for 1)", ErrBadSimulation, c.SoftPenalty)
	}
	return nil
}

// resolved fills the trace defaults in.
func (c Config) resolved() Config {
	t := traceShapes[c.Trace]
	if c.Load == 0 {
		c.Load = t.load
	}
	if c.Constrained < 0 {
		c.Constrained = t.constrained
	}
	if c.SoftPenalty == 0 {
		c.SoftPenalty = 1
	}
	return c
}

// policy is what a scheduler name switches on (docs/phoenix.md).
type policy struct {
	constraints bool // honour constraints (eagle: ignore them)
	centralLong bool // long jobs by LWL on the big partition
	sss         bool // refuse shorts at long-busy workers, then short-only partition
	sbp         bool // sticky batch probing
	stealing    bool // Hawk's work stealing
	srpt        bool // SRPT with the starvation guard (else FIFO)
	longAtHead  bool // a long reservation at the head runs next
	minProbes   int
	queueBound  int // yaq-d: refuse probes at this queue length (0: none)
	reorder     bool
	negotiate   bool
	prefer      bool
	crv         bool // keep the CRV aggregator
	crvSampling bool
	weighted    bool
	partition   bool // shape the short-only partition by short demand
}

func policyFor(c Config) policy {
	eagle := policy{constraints: true, centralLong: true, sss: true, sbp: true, srpt: true,
		longAtHead: true, minProbes: minProbesEagle}
	switch c.Scheduler {
	case SchedHawkC:
		return policy{constraints: true, centralLong: true, stealing: true, longAtHead: true, minProbes: 2}
	case SchedYaqD:
		return policy{constraints: true, srpt: true, minProbes: 2, queueBound: yaqBound}
	case SchedEagle:
		eagle.constraints = false
		return eagle
	case SchedPhoenix:
		eagle.reorder, eagle.negotiate, eagle.prefer = !c.NoReorder, !c.NoNegotiate, !c.NoPrefer
		eagle.crvSampling, eagle.weighted, eagle.partition = c.CRVSampling, c.Weighted, !c.NoPartition
		eagle.crv = eagle.reorder || eagle.negotiate || eagle.crvSampling || eagle.partition
	}
	return eagle
}

// Parameters of docs/phoenix.md.
const (
	netDelay       = 0.0005 // one-way network delay, seconds
	probeRatio     = 2
	minProbesEagle = 20
	sssRounds      = 2
	guardCap       = 5.0 // starvation guard slack multiplier
	stealAttempts  = 10
	stealLimit     = 10000
	yaqBound       = 10 // Yaq-d queue bound
	yaqRounds      = 3  // Yaq-d re-probes before queueing anyway
	crvPeriod      = 1.0
	crvAlpha       = 0.2
	rhoCap         = 0.95
	budgetMin      = 1.0
	budgetFactor   = 1.0
	longBudget     = 0.1
	beta           = 1.0 // weight of the class wait in ORDER = WEIGHTED
)
