//go:build !race

package integration

// raceEnabled: the tests run without the race detector.
const raceEnabled = false
