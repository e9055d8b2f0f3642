package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseConstraint reads a constraint as people write it on a command line
// or in a job file: "rack==r1", "kernel >= 6.1", "zone in z1,z2",
// "gpu exists", "host regex ^web-", and the group operators "host unique",
// "rack same", "rack max_per 2". Symbolic operators need no spaces; word
// operators are separated by spaces. A trailing "soft" makes a preference
// of it ("rack == r1 soft"): placed where it holds when possible.
func ParseConstraint(s string) (Constraint, error) {
	text := strings.TrimSpace(s)
	// "soft" ends a preference only where what is before it is a whole
	// constraint: "name == soft" compares with the value soft.
	if rest, ok := strings.CutSuffix(text, " soft"); ok {
		if c, err := parseHard(rest); err == nil && !(c.takesValue() && c.Value == "") {
			c.Soft = true
			return c, nil
		}
	}
	c, err := parseHard(text)
	if errors.Is(err, ErrInvalidConstraint) {
		return Constraint{}, fmt.Errorf("constraint %q: %w", s, err)
	}
	if err != nil {
		return Constraint{}, fmt.Errorf("%w: %q: %s (e.g. pool==gpu, zone in z1,z2, gpu exists, host unique)",
			ErrInvalidConstraint, s, err)
	}
	return c, nil
}

// takesValue reports whether the operator compares with one value.
func (c Constraint) takesValue() bool {
	switch c.Op {
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpRegex:
		return true
	}
	return false
}

func parseHard(text string) (Constraint, error) {
	var c Constraint
	if f := strings.Fields(text); len(f) >= 2 && isWordOp(f[1]) {
		c = Constraint{Attribute: f[0], Op: Op(f[1])}
		arg := strings.Join(f[2:], " ")
		switch c.Op {
		case OpIn, OpNotIn:
			for _, v := range strings.Split(arg, ",") {
				if v = strings.TrimSpace(v); v != "" {
					c.Values = append(c.Values, v)
				}
			}
		case OpExists, OpNotExists, OpUnique, OpSame:
			if arg != "" {
				return c, errors.New(string(c.Op) + " takes no value")
			}
		case OpMaxPer:
			n, err := strconv.Atoi(arg)
			if err != nil {
				return c, errors.New("max_per takes a count")
			}
			c.N = n
		default:
			c.Value = arg
		}
	} else {
		found := false
		// Two-character operators first, so "<=" is not read as "<".
		for _, op := range []Op{OpEq, OpNe, OpLe, OpGe, OpLt, OpGt} {
			if attr, val, ok := strings.Cut(text, string(op)); ok {
				c = Constraint{Attribute: strings.TrimSpace(attr), Op: op, Value: strings.TrimSpace(val)}
				found = true
				break
			}
		}
		if !found {
			return c, errors.New("no operator")
		}
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

func isWordOp(s string) bool {
	switch Op(s) {
	case OpIn, OpNotIn, OpExists, OpNotExists, OpRegex, OpUnique, OpSame, OpMaxPer:
		return true
	}
	return false
}
