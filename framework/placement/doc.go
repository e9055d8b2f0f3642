// Package placement is the SDK's help with offers: adding them up and
// grouping them by agent, fitting task shapes and picking ports, judging
// constraints as the master and agents do (protocol's evaluation, so a
// scheduler never judges an offer differently from them), and Place,
// which finds where a set of tasks can run together on a round's offers
// under group constraints. It is pure: offers and specs in, answers out.
package placement
