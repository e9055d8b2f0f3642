package offers

import (
	"fmt"
	"strings"
)

// Policy names an allocation policy.
type Policy string

// The allocation policies. Dynamic is the default.
const (
	// PolicyStatic allocates toward the static H-DRF allocation (the paper's
	// Algorithm 1, by whole tasks), recomputed from scratch whenever demand or
	// capacity changes: the reference definition, and the slowest.
	PolicyStatic Policy = "static"
	// PolicyDynamic is dynamic H-DRF with the scale-down rescaling rule: every
	// child above its lowest non-blocked sibling's weighted share is scaled down
	// to it, and every resource counts.
	PolicyDynamic Policy = "dynamic"
	// PolicyPaper is dynamic H-DRF as the paper's Algorithms 2-4 read:
	// non-blocked children rescaled to their minimum, blocked children
	// unscaled, and saturated resources ignored in shares.
	PolicyPaper Policy = "paper"
	// PolicyNaive walks the tree by plain-sum dominant shares (starves leaves).
	PolicyNaive Policy = "naive"
	// PolicyCollapsed flattens the tree into per-leaf weights and runs flat
	// weighted DRF.
	PolicyCollapsed Policy = "collapsed"
	// PolicyMesos is recursive weighted DRF as Mesos's hierarchical sorter does
	// it: siblings ordered by the weighted dominant share of their subtree's
	// plain sum, frameworks within a role compared unweighted.
	PolicyMesos Policy = "mesos"
)

// Policies lists every policy, default first.
func Policies() []Policy {
	return []Policy{PolicyDynamic, PolicyStatic, PolicyPaper, PolicyNaive, PolicyCollapsed, PolicyMesos}
}

// PolicyNames lists every policy's name, default first, comma-separated:
// for flags' help and error messages.
func PolicyNames() string {
	names := make([]string, 0, len(Policies()))
	for _, p := range Policies() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

// ParsePolicy resolves a policy name.
func ParsePolicy(name string) (Policy, error) {
	for _, p := range Policies() {
		if string(p) == name {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q (want one of %s)", ErrUnknownPolicy, name, PolicyNames())
}

// rescale says how an internal node's vector is built from its children's.
type rescale uint8

const (
	rescalePlain     rescale = iota // plain sum (naive, static, mesos)
	rescaleScaleDown                // scale-down rule (dynamic)
	rescaleLiteral                  // paper-literal rule with shares over Y
)

func (p Policy) rescale() rescale {
	switch p {
	case PolicyDynamic:
		return rescaleScaleDown
	case PolicyPaper:
		return rescaleLiteral
	}
	return rescalePlain
}
