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

// policyRules is everything a policy changes in the allocator. A new
// policy is its constant above and one entry in policyTable, with hooks
// of its own only where it needs them; New resolves the entry once, and
// rounds and the share walk read it.
type policyRules struct {
	name Policy
	// about is the policy in a few words, for flags' help.
	about string
	// rescale says how an internal node's vector is built from its
	// children's.
	rescale rescale
	// unweightedLeaves compares the frameworks of a role unweighted.
	unweightedLeaves bool
	// targetsFirst gives each turn toward the policy's own targets first,
	// then by plain shares, so that fragmentation across agents never
	// idles a usable resource.
	targetsFirst bool
	// refresh brings the policy's own state (its targets, its weights) up
	// to date before a round; nil: it keeps none.
	refresh func(*Allocator)
	// pick chooses the leaf that gets the next task unit; nil: the tree
	// walk by weighted shares.
	pick func(*Allocator, *turn) *node
}

// policyTable holds every policy, the default first.
var policyTable = []policyRules{
	{name: PolicyDynamic, about: "dynamic H-DRF, scale-down rule", rescale: rescaleScaleDown},
	{name: PolicyStatic, about: "toward the static H-DRF allocation, the reference and slowest", rescale: rescalePlain,
		targetsFirst: true, refresh: func(a *Allocator) { a.static.refresh(a) }},
	{name: PolicyPaper, about: "dynamic H-DRF as the paper's algorithms read", rescale: rescaleLiteral},
	{name: PolicyNaive, about: "plain-sum dominant shares down the tree", rescale: rescalePlain},
	{name: PolicyCollapsed, about: "flat weighted DRF over per-leaf weights", rescale: rescalePlain,
		refresh: func(a *Allocator) { a.collapsed.refresh(a) }, pick: (*Allocator).pickFlat},
	{name: PolicyMesos, about: "recursive weighted DRF as Mesos's sorter", rescale: rescalePlain, unweightedLeaves: true},
}

// rulesOf is p's entry in policyTable, nil for no policy.
func rulesOf(p Policy) *policyRules {
	for i := range policyTable {
		if policyTable[i].name == p {
			return &policyTable[i]
		}
	}
	return nil
}

// Policies lists every policy, default first.
func Policies() []Policy {
	out := make([]Policy, len(policyTable))
	for i, r := range policyTable {
		out[i] = r.name
	}
	return out
}

// PolicyNames lists every policy's name, default first, comma-separated:
// for error messages.
func PolicyNames() string {
	names := make([]string, 0, len(policyTable))
	for _, r := range policyTable {
		names = append(names, string(r.name))
	}
	return strings.Join(names, ", ")
}

// PolicyHelp lists every policy with what it is, default first: for
// flags' help.
func PolicyHelp() string {
	parts := make([]string, 0, len(policyTable))
	for _, r := range policyTable {
		parts = append(parts, fmt.Sprintf("%s: %s", r.name, r.about))
	}
	return strings.Join(parts, "; ")
}

// ParsePolicy resolves a policy name.
func ParsePolicy(name string) (Policy, error) {
	if r := rulesOf(Policy(name)); r != nil {
		return r.name, nil
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
