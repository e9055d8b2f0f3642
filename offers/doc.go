// Package offers is allot's allocation core: the pure function the master's
// leader runs to decide which framework gets offered which agent's resources.
//
// It holds the role tree (weighted roles with frameworks as leaves), every
// agent's free resources, each framework's usage and declared demand, the
// outstanding offers with their expiry, decline filters and suppression. An
// Allocator is fed events (agents and frameworks added or removed, demand
// reports, accepts, declines, task ends) together with the current time and
// returns decisions (offers to send, offers to rescind). It starts no
// goroutines, does no I/O and never reads the clock, so the same event
// sequence always yields the same decisions; the master logs the outcomes it
// commits through Raft and followers never recompute them.
//
// Fairness follows hierarchical dominant resource fairness (H-DRF). Six
// policies are selectable by name (see Policy); the default, "dynamic", is
// dynamic H-DRF with the scale-down rescaling rule, which tracks the static
// H-DRF allocation under task churn. Ties are broken deterministically: by
// weighted dominant share compared with a relative tolerance of 1e-9, then by
// creation order of the sibling (first created wins), so that a leftmost child
// in a scenario file wins a tie.
//
// An Allocator is not safe for concurrent use; the master drives it from one
// goroutine.
package offers
