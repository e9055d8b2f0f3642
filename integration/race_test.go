//go:build race

package integration

// raceEnabled: the tests run with the race detector, and so is the allot
// binary they build (its packages are then already compiled).
const raceEnabled = true
