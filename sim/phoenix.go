package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The hybrid-scheduler simulator of docs/phoenix.md (see its
// "Simulator"): one-slot workers with reservation queues, centralised
// least-work-left placement of long jobs on a big partition, batch probing
// with late binding for short jobs, Eagle's succinct state sharing and sticky
// batch probing, and Phoenix's CRV-based queue reordering and admission
// control on top. Everything is driven by one seeded event loop; nothing
// reads the wall clock.

// ErrBadPhoenix reports a Phoenix simulation that cannot run as configured.
var ErrBadPhoenix = errors.New("bad phoenix simulation")

// Schedulers of the Phoenix simulator.
const (
	PhoenixHawkC   = "hawk-c"
	PhoenixEagleC  = "eagle-c"
	PhoenixYaqD    = "yaq-d"
	PhoenixPhoenix = "phoenix"
	PhoenixEagle   = "eagle" // Eagle with every constraint ignored
)

// PhoenixSchedulers lists the scheduler names.
func PhoenixSchedulers() []string {
	return []string{PhoenixHawkC, PhoenixEagleC, PhoenixYaqD, PhoenixPhoenix, PhoenixEagle}
}

// PhoenixConfig configures one run.
type PhoenixConfig struct {
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

// DefaultPhoenixConfig is the Google-like trace on 15,000 workers under
// Phoenix.
func DefaultPhoenixConfig() PhoenixConfig {
	return PhoenixConfig{Trace: "google", Scheduler: PhoenixPhoenix, Seed: 1, Workers: 15000,
		Jobs: 20000, Constrained: -1, SoftPenalty: 1}
}

// Validate checks the configuration.
func (c PhoenixConfig) Validate() error {
	if _, ok := pxTraces[c.Trace]; !ok {
		return fmt.Errorf("%w: trace %q (want one of %s)", ErrBadPhoenix, c.Trace, strings.Join(PhoenixTraces(), ", "))
	}
	if !slices.Contains(PhoenixSchedulers(), c.Scheduler) {
		return fmt.Errorf("%w: scheduler %q (want one of %s)", ErrBadPhoenix, c.Scheduler, strings.Join(PhoenixSchedulers(), ", "))
	}
	if c.Workers < 10 || c.Workers > 200000 {
		return fmt.Errorf("%w: workers %d (want 10 to 200000)", ErrBadPhoenix, c.Workers)
	}
	if c.Jobs < 1 || c.Jobs > 2000000 {
		return fmt.Errorf("%w: jobs %d (want 1 to 2000000)", ErrBadPhoenix, c.Jobs)
	}
	if c.Load < 0 || c.Load > 2 {
		return fmt.Errorf("%w: load %v (want 0 for the default, or up to 2)", ErrBadPhoenix, c.Load)
	}
	if c.Constrained > 1 {
		return fmt.Errorf("%w: constrained share %v (want at most 1; negative for the default)", ErrBadPhoenix, c.Constrained)
	}
	if c.SoftPenalty < 0 {
		return fmt.Errorf("%w: soft penalty %v (want >= 1, or 0 for 1)", ErrBadPhoenix, c.SoftPenalty)
	}
	return nil
}

// resolved fills the trace defaults in.
func (c PhoenixConfig) resolved() PhoenixConfig {
	t := pxTraces[c.Trace]
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

// pxPolicy is what a scheduler name switches on (docs/phoenix.md).
type pxPolicy struct {
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

func pxPolicyFor(c PhoenixConfig) pxPolicy {
	eagle := pxPolicy{constraints: true, centralLong: true, sss: true, sbp: true, srpt: true,
		longAtHead: true, minProbes: pxMinProbesEagle}
	switch c.Scheduler {
	case PhoenixHawkC:
		return pxPolicy{constraints: true, centralLong: true, stealing: true, longAtHead: true, minProbes: 2}
	case PhoenixYaqD:
		return pxPolicy{constraints: true, srpt: true, minProbes: 2, queueBound: pxYaqBound}
	case PhoenixEagle:
		eagle.constraints = false
		return eagle
	case PhoenixPhoenix:
		eagle.reorder, eagle.negotiate, eagle.prefer = !c.NoReorder, !c.NoNegotiate, !c.NoPrefer
		eagle.crvSampling, eagle.weighted, eagle.partition = c.CRVSampling, c.Weighted, !c.NoPartition
		eagle.crv = eagle.reorder || eagle.negotiate || eagle.crvSampling || eagle.partition
	}
	return eagle
}

// Parameters of docs/phoenix.md.
const (
	pxNetDelay       = 0.0005 // one-way network delay, seconds
	pxProbeRatio     = 2
	pxMinProbesEagle = 20
	pxSSSRounds      = 2
	pxCap            = 5.0 // starvation guard slack multiplier
	pxStealAttempts  = 10
	pxStealLimit     = 10000
	pxYaqBound       = 10 // Yaq-d queue bound
	pxYaqRounds      = 3  // Yaq-d re-probes before queueing anyway
	pxCRVPeriod      = 1.0
	pxAlpha          = 0.2
	pxRhoCap         = 0.95
	pxBudgetMin      = 1.0
	pxBudgetFactor   = 1.0
	pxLongBudget     = 0.1
	pxBeta           = 1.0 // weight of the class wait in ORDER = WEIGHTED
)
