package dag

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework/altruism"
)

// Defaults for options left unset.
const (
	// DefaultMaxAttempts is how many times a task may run before its job
	// fails, unless WithMaxAttempts says otherwise.
	DefaultMaxAttempts = 3
	// DefaultCallTimeout bounds each call the scheduler makes to the
	// master on its own (from a callback or the plan timer).
	DefaultCallTimeout = 10 * time.Second
)

// Option configures a Scheduler.
type Option func(*config) error

type config struct {
	planner     altruism.Config
	greedy      bool
	maxAttempts int
	logger      hclog.Logger
	clock       Clock
	seed        uint64
	callTimeout time.Duration
	onDone      func(Result)
}

func defaultConfig() config {
	return config{
		planner:     altruism.DefaultConfig(),
		maxAttempts: DefaultMaxAttempts,
		logger:      hclog.NewNullLogger(),
		clock:       wallClock{},
		callTimeout: DefaultCallTimeout,
	}
}

// WithAltruism sets P(altruism), in [0, 1]: the chance that a plan is
// altruistic rather than greedy (altruism.Config.Altruism). The default is
// 1, always; 0 makes every plan greedy within the job's share, with what
// the share cannot hold still declared as optional work.
func WithAltruism(p float64) Option {
	return func(c *config) error {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("%w: altruism %v outside [0, 1]", ErrInvalidOption, p)
		}
		c.planner.Altruism = p
		return nil
	}
}

// WithPlanner sets the planner configuration of every job in full
// (P(altruism) and the floor on a running task's planned remaining time).
func WithPlanner(cfg altruism.Config) Option {
	return func(c *config) error {
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		c.planner = cfg
		return nil
	}
}

// WithGreedy makes the scheduler a plain DAG runner: shares are ignored,
// every runnable task is declared as must-start and launched on any offer
// it fits, and nothing is optional.
func WithGreedy() Option {
	return func(c *config) error {
		c.greedy = true
		return nil
	}
}

// WithMaxAttempts sets how many times a task may run (default
// DefaultMaxAttempts): a task that ends FAILED, LOST, ERROR, KILLED or
// DROPPED that many times fails its job. A launch the master refuses for
// the task's own fault (an invalid command, say) counts as an attempt.
func WithMaxAttempts(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: max attempts %d", ErrInvalidOption, n)
		}
		c.maxAttempts = n
		return nil
	}
}

// WithLogger sets the logger; the scheduler logs under the name "dag".
func WithLogger(l hclog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		c.logger = l
		return nil
	}
}

// WithClock sets the scheduler's time source (default: the wall clock).
func WithClock(clk Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidOption)
		}
		c.clock = clk
		return nil
	}
}

// WithSeed seeds the per-job random streams that decide, plan by plan,
// whether a job is altruistic (with P(altruism) below 1). A job's stream
// depends on the seed and the job's ID only. The default seed is 0.
func WithSeed(seed uint64) Option {
	return func(c *config) error {
		c.seed = seed
		return nil
	}
}

// WithCallTimeout bounds each call the scheduler makes to the master on
// its own, from a driver callback or the plan timer (default
// DefaultCallTimeout). Calls made for Submit use its context.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: call timeout %v", ErrInvalidOption, d)
		}
		c.callTimeout = d
		return nil
	}
}

// WithOnDone calls f with every job's Result once the job has ended, as
// well as making it available to Wait. f runs without the scheduler's
// lock held, on the goroutine that ended the job (a driver callback or the
// plan timer); it may call the scheduler, and should return quickly.
func WithOnDone(f func(Result)) Option {
	return func(c *config) error {
		c.onDone = f
		return nil
	}
}
