package main

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// parseConstraint reads a constraint as operators write it on the command
// line: "rack==r1", "kernel >= 6.1", "zone in z1,z2", "gpu exists",
// "host regex ^web-". Symbolic operators need no spaces; word operators
// (in, not_in, exists, not_exists, regex) are separated by spaces.
func parseConstraint(s string) (protocol.Constraint, error) {
	bad := func(why string) (protocol.Constraint, error) {
		return protocol.Constraint{}, fmt.Errorf("constraint %q: %s (e.g. pool==gpu, zone in z1,z2, gpu exists)", s, why)
	}
	var c protocol.Constraint
	if f := strings.Fields(s); len(f) >= 2 && isWordOp(f[1]) {
		c = protocol.Constraint{Attribute: f[0], Op: protocol.Op(f[1])}
		arg := strings.Join(f[2:], " ")
		switch c.Op {
		case protocol.OpIn, protocol.OpNotIn:
			for _, v := range strings.Split(arg, ",") {
				if v = strings.TrimSpace(v); v != "" {
					c.Values = append(c.Values, v)
				}
			}
		case protocol.OpExists, protocol.OpNotExists:
			if arg != "" {
				return bad(string(c.Op) + " takes no value")
			}
		default:
			c.Value = arg
		}
	} else {
		found := false
		// Two-character operators first, so "<=" is not read as "<".
		for _, op := range []protocol.Op{protocol.OpEq, protocol.OpNe, protocol.OpLe, protocol.OpGe, protocol.OpLt, protocol.OpGt} {
			if attr, val, ok := strings.Cut(s, string(op)); ok {
				c = protocol.Constraint{Attribute: strings.TrimSpace(attr), Op: op, Value: strings.TrimSpace(val)}
				found = true
				break
			}
		}
		if !found {
			return bad("no operator")
		}
	}
	if err := c.Validate(); err != nil {
		return bad(err.Error())
	}
	return c, nil
}

func isWordOp(s string) bool {
	switch protocol.Op(s) {
	case protocol.OpIn, protocol.OpNotIn, protocol.OpExists, protocol.OpNotExists, protocol.OpRegex:
		return true
	}
	return false
}
