package protocol

import (
	"fmt"
	"math"
)

// maxPortsPerShape bounds TaskShape.Ports (every TCP port).
const maxPortsPerShape = 65536

// TaskShape is a class of identical pending tasks: what each needs and how
// many there are.
type TaskShape struct {
	// Resources are one task's scalar needs (cpus, mem, ...).
	Resources Resources `msgpack:"res" json:"resources"`
	// Ports is how many ports one task needs from the "ports" range.
	Ports int `msgpack:"ports,omitempty" json:"ports,omitempty"`
	// Count is how many tasks of this shape are pending.
	Count       int64        `msgpack:"n" json:"count"`
	Constraints []Constraint `msgpack:"cons,omitempty" json:"constraints,omitempty"`
}

// Validate checks resources, counts and constraints.
func (s TaskShape) Validate() error {
	if err := checkResources("resources", s.Resources); err != nil {
		return err
	}
	if s.Ports < 0 || s.Ports > maxPortsPerShape {
		return Errorf(ErrInvalidArgument, "ports is %d, want 0 to %d", s.Ports, maxPortsPerShape)
	}
	if err := checkNonNegative("count", s.Count); err != nil {
		return err
	}
	return checkConstraints("constraints", s.Constraints)
}

// DemandRequest reports what the framework wants now, replacing its previous
// report. Per task shape the master offers max(Demand − Optional, MustStart)
// tasks as fair (H-DRF) offers, and Optional tasks as leftover offers from
// what the fair offers leave free, frameworks with the least RemainingWork
// first (Carbyne altruism). A framework that sends only Demand is served it
// all fairly and gets no leftover offers. Demand is leader memory only: the
// SDK resends it after reconnecting. A report with no shapes at all
// withdraws the declaration: the framework is offered whatever is left on
// agents again, as a framework that never declared demand is. Shapes with
// count 0 declare that nothing is pending.
type DemandRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	// Demand is every task the framework would launch now.
	Demand []TaskShape `msgpack:"demand,omitempty" json:"demand,omitempty"`
	// MustStart is the subset that must start now for the job to keep its
	// completion time (Carbyne's must-start set).
	MustStart []TaskShape `msgpack:"must,omitempty" json:"must_start,omitempty"`
	// Optional is the subset that can run early on leftover resources.
	Optional []TaskShape `msgpack:"opt,omitempty" json:"optional,omitempty"`
	// RemainingWork estimates the framework's remaining work in task-seconds;
	// 0 means unknown.
	RemainingWork float64 `msgpack:"work,omitempty" json:"remaining_work,omitempty"`
}

// Validate checks the ID, list lengths (at most MaxListLen shapes in all),
// every shape, and that RemainingWork is finite and non-negative.
func (r DemandRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	total := len(r.Demand) + len(r.MustStart) + len(r.Optional)
	if err := checkLen("task shapes", total, MaxListLen); err != nil {
		return err
	}
	lists := []struct {
		name   string
		shapes []TaskShape
	}{{"demand", r.Demand}, {"must_start", r.MustStart}, {"optional", r.Optional}}
	for _, l := range lists {
		for i, s := range l.shapes {
			if err := s.Validate(); err != nil {
				return fmt.Errorf("%s[%d]: %w", l.name, i, err)
			}
		}
	}
	return checkFloat("remaining_work", r.RemainingWork, math.MaxFloat64)
}
