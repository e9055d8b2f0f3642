// Package parallel runs the independent simulations of a comparison at
// once, one per processor: every run is a pure function of its
// configuration, so the order in which they finish changes nothing.
package parallel
