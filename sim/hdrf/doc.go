// Package hdrf replays H-DRF scenarios without a timeline: a weighted tree
// whose leaves run identical tasks on one pool of capacity, filled once
// under an allocation policy and then churned by random task completions,
// reporting each leaf's running tasks and shares. It is what `allot sim
// hdrf` prints for such a scenario (offers/scenario replays the timed ones)
// and how docs/hdrf.md's figures are checked against the baseline policies.
//
// ParseScenario reads a scenario's JSON strictly; Run replays it under one
// policy.
package hdrf
