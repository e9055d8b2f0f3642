package files

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
)

// DefaultMaxRead is the default cap on the bytes one request reads.
const DefaultMaxRead int64 = 16 << 20

// ErrConfig reports an invalid handler configuration.
var ErrConfig = errors.New("invalid files configuration")

// Config configures the sandbox file handler.
type Config struct {
	// Root is the directory holding the sandboxes; every path a request
	// names is relative to it. It must exist when NewHandler is called.
	Root string
	// Token is the bearer token every request must carry. It is required:
	// sandboxes hold tasks' private files.
	Token string
	// Secret, when set, also admits framework tokens derived from it
	// (protocol.FrameworkFilesToken, FrameworkToken) until they expire,
	// each to its own framework's sandboxes only, and
	// symbolic links in a sandbox are not followed out of it for them.
	// Agents that share the secret accept each other's framework tokens.
	Secret string
	// MaxRead caps the length of one read and the bytes one tail returns
	// before following (zero: DefaultMaxRead).
	MaxRead int64
	// Shuffle, when set, orders the downloads that name a coflow (the
	// coflow and dst parameters): each waits for its turn before it is
	// served, and its end is reported back. Nil serves them at once, the
	// parameters ignored.
	Shuffle Shuffle
	// Logger receives the handler's logs under the name "files" (nil
	// discards them).
	Logger hclog.Logger
}

// Validate checks the configuration without touching the file system.
func (c Config) Validate() error {
	switch {
	case c.Root == "":
		return fmt.Errorf("%w: root directory is required", ErrConfig)
	case c.Token == "":
		return fmt.Errorf("%w: token is required", ErrConfig)
	case c.MaxRead < 0:
		return fmt.Errorf("%w: max read %d is negative", ErrConfig, c.MaxRead)
	}
	return nil
}
