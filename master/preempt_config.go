package master

import (
	"fmt"
	"time"

	"github.com/allot-project/allot/offers"
)

// PreemptionConfig says when the leader takes resources back
// (docs/preemption.md).
type PreemptionConfig struct {
	// Policy is the cluster's preemption policy: "off", "guarantees"
	// (default: take back for roles below their guarantee, and revocable
	// resources for frameworks below their fair share) or "fair" (also
	// preempt for fair shares). Roles may set their own.
	Policy string
	// Interval is how often the leader decides what to take back.
	Interval time.Duration
	// Delay is how long a role or framework must stay short before
	// anything is taken for it.
	Delay time.Duration
	// Deadline is the warning a framework gets before its tasks are
	// killed.
	Deadline time.Duration
	// MaxFraction bounds what one decision newly takes, as a fraction of
	// the cluster's capacity of each resource.
	MaxFraction float64
}

// DefaultPreemptionConfig returns the defaults `allot master` runs with.
func DefaultPreemptionConfig() PreemptionConfig {
	d := offers.DefaultPreemption()
	return PreemptionConfig{
		Policy:      string(d.Policy),
		Interval:    time.Second,
		Delay:       d.Delay,
		Deadline:    30 * time.Second,
		MaxFraction: d.MaxFraction,
	}
}

// Validate checks the settings.
func (c PreemptionConfig) Validate() error {
	if c.Interval <= 0 || c.Deadline < 0 {
		return fmt.Errorf("%w: preemption interval %v and deadline %v (want > 0 and ≥ 0)", ErrConfig, c.Interval, c.Deadline)
	}
	if err := c.allocator().Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return nil
}

// allocator is the part the allocator's planner takes.
func (c PreemptionConfig) allocator() offers.PreemptionConfig {
	return offers.PreemptionConfig{Policy: offers.PreemptionPolicy(c.Policy), Delay: c.Delay, MaxFraction: c.MaxFraction}
}
