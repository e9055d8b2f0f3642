package offers

import (
	"errors"

	"github.com/allot-project/allot/protocol"
)

// Errors returned by the allocator. Those that reach frameworks wrap a
// protocol sentinel so that their wire code survives the trip.
var (
	ErrUnknownPolicy    = errors.New("unknown allocation policy")
	ErrUnknownFramework = protocol.ErrUnknownFramework
	ErrUnknownAgent     = protocol.ErrUnknownAgent
	ErrUnknownOffer     = protocol.ErrUnknownOffer
	ErrUnknownRole      = protocol.ErrUnknownRole
	ErrOfferMismatch    = protocol.ErrOfferMismatch
	ErrInsufficient     = protocol.ErrInsufficient
	ErrDuplicate        = protocol.ErrDuplicate
	ErrInvalid          = protocol.ErrInvalidArgument
)
