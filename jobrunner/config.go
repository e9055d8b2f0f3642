package jobrunner

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
)

// ErrConfig is what an invalid Config wraps.
var ErrConfig = errors.New("invalid job runner config")

// Config is the runner's.
type Config struct {
	// Connect are the SDK options that reach the cluster as the runner's
	// principal (URLs, principal, credentials); every framework the
	// runner subscribes and its store use them.
	Connect []framework.Option
	// Name is the frameworks' name (default allot-jobs).
	Name string
	// Interval is how often every job is planned again when nothing
	// happens (default 1 s).
	Interval time.Duration
	// FailoverTimeout is how long the master keeps the runner's
	// frameworks and their tasks while no runner is connected (default
	// one week): a runner that comes back within it adopts them.
	FailoverTimeout time.Duration
	// LeaseTTL is how long the active runner's lease lasts without
	// renewal before a waiting runner takes over (default 10 s); it is
	// renewed every LeaseTTL/4.
	LeaseTTL time.Duration
	Logger   hclog.Logger
}

// DefaultConfig is a Config with the defaults set.
func DefaultConfig() Config {
	return Config{Name: "allot-jobs", Interval: time.Second, FailoverTimeout: 7 * 24 * time.Hour, LeaseTTL: 10 * time.Second,
		Logger: hclog.NewNullLogger()}
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("%w: empty name", ErrConfig)
	}
	if c.Interval <= 0 || c.FailoverTimeout <= 0 || c.LeaseTTL <= 0 {
		return fmt.Errorf("%w: interval %v, failover timeout %v and lease TTL %v must be positive", ErrConfig,
			c.Interval, c.FailoverTimeout, c.LeaseTTL)
	}
	if c.Logger == nil {
		return fmt.Errorf("%w: no logger", ErrConfig)
	}
	return nil
}
