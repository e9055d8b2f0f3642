package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// Op is a constraint operator.
type Op string

// Per-task operators, evaluated against one agent's attributes.
const (
	OpEq        Op = "=="
	OpNe        Op = "!="
	OpLt        Op = "<"
	OpLe        Op = "<="
	OpGt        Op = ">"
	OpGe        Op = ">="
	OpIn        Op = "in"
	OpNotIn     Op = "not_in"
	OpExists    Op = "exists"
	OpNotExists Op = "not_exists"
	OpRegex     Op = "regex"
)

// Group operators, evaluated over the agents of a task group or gang.
const (
	OpUnique Op = "unique"  // every task on a distinct value of the attribute
	OpMaxPer Op = "max_per" // at most N tasks per value of the attribute
	OpSame   Op = "same"    // every task on the same value of the attribute
)

// Constraint restricts placement by an agent attribute. Hard constraints are
// never violated; soft ones are preferences.
type Constraint struct {
	Attribute string   `msgpack:"attribute" json:"attribute"`
	Op        Op       `msgpack:"op" json:"op"`
	Value     string   `msgpack:"value,omitempty" json:"value,omitempty"`
	Values    []string `msgpack:"values,omitempty" json:"values,omitempty"`
	N         int      `msgpack:"n,omitempty" json:"n,omitempty"`
	Soft      bool     `msgpack:"soft,omitempty" json:"soft,omitempty"`
}

// IsGroup reports whether the operator constrains a set of placements
// rather than one.
func (c Constraint) IsGroup() bool {
	return c.Op == OpUnique || c.Op == OpMaxPer || c.Op == OpSame
}

// String renders the constraint, e.g. "rack in [r1 r2] (soft)".
func (c Constraint) String() string {
	var arg string
	switch c.Op {
	case OpIn, OpNotIn:
		arg = "[" + strings.Join(c.Values, " ") + "]"
	case OpMaxPer:
		arg = strconv.Itoa(c.N)
	case OpExists, OpNotExists, OpUnique, OpSame:
	default:
		arg = strconv.Quote(c.Value)
	}
	s := strings.TrimSpace(c.Attribute + " " + string(c.Op) + " " + arg)
	if c.Soft {
		s += " (soft)"
	}
	return s
}

// Validate checks the operator and its arguments.
func (c Constraint) Validate() error {
	if c.Attribute == "" {
		return fmt.Errorf("%w: constraint without attribute", ErrInvalidConstraint)
	}
	switch c.Op {
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpExists, OpNotExists, OpUnique, OpSame:
	case OpIn, OpNotIn:
		if len(c.Values) == 0 {
			return fmt.Errorf("%w: %s needs values", ErrInvalidConstraint, c.Op)
		}
	case OpRegex:
		if _, err := compileRegex(c.Value); err != nil {
			return fmt.Errorf("%w: regex %q: %v", ErrInvalidConstraint, c.Value, err)
		}
	case OpMaxPer:
		if c.N < 1 {
			return fmt.Errorf("%w: max_per needs n >= 1", ErrInvalidConstraint)
		}
	default:
		return fmt.Errorf("%w: unknown operator %q", ErrInvalidConstraint, c.Op)
	}
	return nil
}

// Matches evaluates a per-task constraint against attributes. It returns
// whether they satisfy it and, when not, why. Group operators always match
// here; use GroupAllows for them. A missing attribute satisfies only !=,
// not_in and not_exists.
func (c Constraint) Matches(attrs Attributes) (bool, string) {
	if c.Holds(attrs) {
		return true, ""
	}
	v, ok := attrs[c.Attribute]
	if !ok {
		return false, fmt.Sprintf("attribute %q missing for %s", c.Attribute, c)
	}
	return false, fmt.Sprintf("attribute %s=%s fails %s", c.Attribute, v, c)
}

// Holds is Matches without the reason, for the callers that decide many
// times over and need none.
func (c Constraint) Holds(attrs Attributes) bool {
	if c.IsGroup() {
		return true
	}
	v, ok := attrs[c.Attribute]
	if !ok {
		switch c.Op {
		case OpNe, OpNotIn, OpNotExists:
			return true
		}
		return false
	}
	return evalOp(c, v)
}

// MatchHard evaluates every hard per-task constraint; it returns the reason
// of the first one that fails.
func MatchHard(cs []Constraint, attrs Attributes) (bool, string) {
	for _, c := range cs {
		if c.Soft {
			continue
		}
		if ok, why := c.Matches(attrs); !ok {
			return false, why
		}
	}
	return true, ""
}

// HoldHard is MatchHard without the reason.
func HoldHard(cs []Constraint, attrs Attributes) bool {
	for _, c := range cs {
		if !c.Soft && !c.Holds(attrs) {
			return false
		}
	}
	return true
}

// SoftMisses counts the soft per-task constraints attrs fail.
func SoftMisses(cs []Constraint, attrs Attributes) int {
	n := 0
	for _, c := range cs {
		if c.Soft {
			if ok, _ := c.Matches(attrs); !ok {
				n++
			}
		}
	}
	return n
}
