package offers

import "fmt"

// Placement says in which order agents take their turns in a round, and so
// which agents the offers are built from. H-DRF decides whose turn it is
// within an agent's turn either way; placement changes where tasks go,
// not how much each framework gets.
type Placement string

// Placements.
const (
	// PlacementSpread starts each round one agent further on, spreading
	// work over the cluster.
	PlacementSpread Placement = "spread"
	// PlacementFirstFit visits agents in the order they joined, every
	// round.
	PlacementFirstFit Placement = "first-fit"
	// PlacementPack visits first the agents where the pending shapes
	// fragment the GPU devices least (placement_pack.go), then the
	// tightest fits.
	PlacementPack Placement = "pack"
)

// ParsePlacement checks a placement name ("" is spread).
func ParsePlacement(s string) (Placement, error) {
	switch p := Placement(s); p {
	case "":
		return PlacementSpread, nil
	case PlacementSpread, PlacementFirstFit, PlacementPack:
		return p, nil
	}
	return "", fmt.Errorf("%w: placement %q (spread, first-fit or pack)", ErrInvalid, s)
}

// turnOrder is the order of the agents' turns in a round starting at
// start, for a placement other than spread; nil for spread.
func (a *Allocator) turnOrder() []*agent {
	switch a.cfg.Placement {
	case PlacementFirstFit:
		return a.agentList
	case PlacementPack:
		return a.packOrder()
	}
	return nil
}
