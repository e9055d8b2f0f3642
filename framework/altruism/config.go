package altruism

import (
	"fmt"
	"time"
)

// Defaults for Config.
const (
	// DefaultAltruism is the default P(altruism): always altruistic, as in
	// the paper.
	DefaultAltruism = 1.0
	// DefaultMinRemaining is the default floor on a running task's planned
	// remaining time (ρ).
	DefaultMinRemaining = 10 * time.Millisecond
)

// Config holds a Planner's settings. Start from DefaultConfig: the zero
// value means P(altruism) = 0, a planner that is always greedy.
type Config struct {
	// Altruism is P(altruism), in [0, 1]: the probability that a plan is
	// altruistic. A plan is altruistic when the caller's draw is below it,
	// so 1 means always and 0 means never (the job then behaves like plain
	// DRF). Jobs with JobSpec.Greedy are never altruistic.
	Altruism float64
	// MinRemaining (ρ) is the least remaining time planned for a running
	// task, used once a task has outlived its estimate. It must be positive:
	// planning such a task as finishing now would free its resources in the
	// plan before they are free, while a small positive value errs towards
	// starting work early rather than late.
	MinRemaining time.Duration
}

// DefaultConfig returns P(altruism) = 1 and ρ = 10 ms.
func DefaultConfig() Config {
	return Config{Altruism: DefaultAltruism, MinRemaining: DefaultMinRemaining}
}

// Validate checks that Altruism is in [0, 1] and MinRemaining is positive.
func (c Config) Validate() error {
	if !(c.Altruism >= 0 && c.Altruism <= 1) {
		return fmt.Errorf("%w: altruism %v outside [0, 1]", ErrInvalidConfig, c.Altruism)
	}
	if c.MinRemaining <= 0 {
		return fmt.Errorf("%w: min remaining %v is not positive", ErrInvalidConfig, c.MinRemaining)
	}
	return nil
}
