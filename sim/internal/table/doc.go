// Package table holds what the simulators' plain-text tables share: the
// column layout and the way a number is written, so that the tables of
// every simulator read alike.
package table
