package offers

import (
	"fmt"
	"math"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Config configures an Allocator.
type Config struct {
	// Policy selects the fairness policy (default PolicyDynamic).
	Policy Policy
	// Placement orders the agents' turns in a round (placement.go;
	// default PlacementSpread).
	Placement Placement
	// OfferTimeout is how long an offer stays outstanding before it is
	// rescinded; zero means offers never expire.
	OfferTimeout time.Duration
	// DefaultRefuse is the refuse filter a decline installs when it names none.
	DefaultRefuse time.Duration
	// MaxRefuse caps any refuse filter (Mesos caps at 365 days).
	MaxRefuse time.Duration
	// MinAllocatable is the smallest remainder worth offering to a framework
	// without declared demand: an offer is made when the remainder holds at
	// least one of these amounts (Mesos: 0.01 CPU or 32 MiB of memory).
	MinAllocatable map[string]int64
	// OfferIDPrefix starts every offer ID; the leader sets it to something
	// unique per term so IDs never repeat across leaders.
	OfferIDPrefix string
	// LeftoverOrder decides how the leftover pool is shared among the
	// frameworks' optional work (default LeftoverJCTFirst).
	LeftoverOrder LeftoverOrder
	// LeftoverWorkWeight is m in the Tetris score align − ε·work used by
	// LeftoverEfficiencyFirst, where ε = m·(mean alignment)/(mean remaining
	// work) over the candidates; zero (the default) packs by alignment alone.
	LeftoverWorkWeight float64
	// DisableCRV turns off Constraint Resource Vector steering in the fair
	// phase (crvround.go): agents that satisfy contended constraints taking
	// their turn first and serving the demand that needs them first. The
	// CRV itself is kept either way. Zero (the default) steers.
	DisableCRV bool
	// CRVMinRatio is the demand-to-supply ratio from which a constraint
	// class with pending demand steers the round; zero (the default) steers
	// by every class with pending demand that some but not all agents
	// satisfy.
	CRVMinRatio float64
	// SoftWait is how long a shape's soft constraints filter agents like
	// hard ones, counted from the first round that sees the shape waiting;
	// then they relax (docs/phoenix.md). Soft constraints that no agent
	// satisfies together with the hard ones relax at once. Zero makes soft
	// constraints never filter.
	SoftWait time.Duration
	// Preemption configures PlanPreemption (preempt.go); a zero Policy is
	// PreemptGuarantees and a zero MaxFraction that of DefaultPreemption.
	Preemption PreemptionConfig
}

// DefaultConfig returns the defaults `allot master` runs with.
func DefaultConfig() Config {
	return Config{
		Policy:         PolicyDynamic,
		OfferTimeout:   30 * time.Second,
		DefaultRefuse:  5 * time.Second,
		MaxRefuse:      365 * 24 * time.Hour,
		MinAllocatable: map[string]int64{protocol.ResCPUs: 10, protocol.ResMem: 32},
		OfferIDPrefix:  "o",
		LeftoverOrder:  LeftoverJCTFirst,
		SoftWait:       5 * time.Second,
		Preemption:     DefaultPreemption(),
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if _, err := ParsePolicy(string(c.Policy)); err != nil {
		return err
	}
	if _, err := ParsePlacement(string(c.Placement)); err != nil {
		return err
	}
	if c.OfferTimeout < 0 || c.DefaultRefuse < 0 || c.MaxRefuse < 0 || c.SoftWait < 0 {
		return fmt.Errorf("%w: negative duration", ErrInvalid)
	}
	for k, v := range c.MinAllocatable {
		if !protocol.ValidResourceName(k) || v < 0 {
			return fmt.Errorf("%w: min allocatable %s=%d", ErrInvalid, k, v)
		}
	}
	if !protocol.ValidID(c.OfferIDPrefix) {
		return fmt.Errorf("%w: offer ID prefix %q", ErrInvalid, c.OfferIDPrefix)
	}
	if c.LeftoverOrder != "" {
		if _, err := ParseLeftoverOrder(string(c.LeftoverOrder)); err != nil {
			return err
		}
	}
	if !(c.LeftoverWorkWeight >= 0) || math.IsInf(c.LeftoverWorkWeight, 0) {
		return fmt.Errorf("%w: leftover work weight %v", ErrInvalid, c.LeftoverWorkWeight)
	}
	if c.Preemption.Policy != "" || c.Preemption.MaxFraction != 0 || c.Preemption.Delay != 0 {
		pc := c.Preemption.withDefaults()
		if err := pc.Validate(); err != nil {
			return err
		}
	}
	if !(c.CRVMinRatio >= 0) || math.IsInf(c.CRVMinRatio, 0) {
		return fmt.Errorf("%w: CRV min ratio %v", ErrInvalid, c.CRVMinRatio)
	}
	return nil
}
