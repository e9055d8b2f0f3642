package master

import "errors"

// ErrConfig reports an invalid master configuration.
var ErrConfig = errors.New("invalid master configuration")
