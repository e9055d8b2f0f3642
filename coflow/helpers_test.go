package coflow

import (
	"errors"

	"github.com/allot-project/allot/protocol"
)

func isInvalidArgument(err error) bool { return errors.Is(err, protocol.ErrInvalidArgument) }
