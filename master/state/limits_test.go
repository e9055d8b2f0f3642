package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestValidate_limitsAreInclusive: every limit a command is checked
// against admits a value exactly at the limit and refuses one past it. It
// fails with any of the checks written with >= for > (each case names the
// check), or with MarkAgentsSilent counting its lists' difference instead
// of their sum.
func TestValidate_limitsAreInclusive(t *testing.T) {
	t.Parallel()
	ids := func(n int) []protocol.AgentID {
		out := make([]protocol.AgentID, n)
		for i := range out {
			out[i] = protocol.AgentID(fmt.Sprintf("ag-%d", i))
		}
		return out
	}
	silences := func(n int) []AgentSilence {
		out := make([]AgentSilence, n)
		for i, id := range ids(n) {
			out[i] = AgentSilence{AgentID: id, Since: t0}
		}
		return out
	}
	scalars := func(n int) map[string]int64 {
		m := make(map[string]int64, n)
		for i := range n {
			m[fmt.Sprintf("r%d", i)] = 1
		}
		return m
	}
	ranges := func(n int) map[string]protocol.Ranges {
		m := make(map[string]protocol.Ranges, n)
		for i := range n {
			m[fmt.Sprintf("p%d", i)] = protocol.Ranges{{Begin: 1, End: 2}}
		}
		return m
	}
	constraints := func(n int) []protocol.Constraint {
		out := make([]protocol.Constraint, n)
		for i := range out {
			out[i] = protocol.Constraint{Attribute: "rack", Op: protocol.OpEq, Value: fmt.Sprintf("r%d", i)}
		}
		return out
	}
	role := func(mod func(*SetRole)) *SetRole {
		c := &SetRole{Path: "eng", Weight: 1}
		mod(c)
		return c
	}
	mark := func(reason, msg int) *MarkAgentTasks {
		return &MarkAgentTasks{AgentID: "ag-1", State: protocol.TaskLost, Reason: strings.Repeat("r", reason),
			Message: strings.Repeat("m", msg), Time: t0}
	}
	type validator interface{ validate() error }
	cases := []struct {
		name      string
		at, after validator
	}{
		{"cmd_agent.go:170 reason length", mark(protocol.MaxNameLen, 0), mark(protocol.MaxNameLen+1, 0)},
		{"cmd_agent.go:170 message length", mark(0, protocol.MaxTextLen), mark(0, protocol.MaxTextLen+1)},
		{"cmd_role.go:47 offer constraints",
			role(func(c *SetRole) { c.OfferConstraints = constraints(maxOfferConstraints) }),
			role(func(c *SetRole) { c.OfferConstraints = constraints(maxOfferConstraints + 1) })},
		{"cmd_role.go:67 guarantee up to the limit",
			role(func(c *SetRole) {
				c.Quota = &Quota{Guarantee: protocol.Resources{Scalars: map[string]int64{"cpus": 4000}},
					Limit: protocol.Resources{Scalars: map[string]int64{"cpus": 4000}}}
			}),
			role(func(c *SetRole) {
				c.Quota = &Quota{Guarantee: protocol.Resources{Scalars: map[string]int64{"cpus": 4001}},
					Limit: protocol.Resources{Scalars: map[string]int64{"cpus": 4000}}}
			})},
		{"validate.go:36 weight", role(func(c *SetRole) { c.Weight = maxWeight }), role(func(c *SetRole) { c.Weight = maxWeight * 1.000001 })},
		{"validate.go:44 scalars",
			role(func(c *SetRole) { c.Quota = &Quota{Limit: protocol.Resources{Scalars: scalars(protocol.MaxMapLen)}} }),
			role(func(c *SetRole) {
				c.Quota = &Quota{Limit: protocol.Resources{Scalars: scalars(protocol.MaxMapLen + 1)}}
			})},
		{"validate.go:44 ranges",
			role(func(c *SetRole) { c.Quota = &Quota{Limit: protocol.Resources{Ranges: ranges(protocol.MaxMapLen)}} }),
			role(func(c *SetRole) { c.Quota = &Quota{Limit: protocol.Resources{Ranges: ranges(protocol.MaxMapLen + 1)}} })},
		{"cmd_silent.go:32 silent and heard together",
			&MarkAgentsSilent{Time: t0, Silent: silences(protocol.MaxListLen - 1), Heard: ids(1)},
			&MarkAgentsSilent{Time: t0, Silent: silences(protocol.MaxListLen), Heard: ids(1)}},
		{"cmd_silent.go:42 silent since the command's time",
			&MarkAgentsSilent{Time: t0, Silent: []AgentSilence{{AgentID: "ag-1", Since: t0}}},
			&MarkAgentsSilent{Time: t0, Silent: []AgentSilence{{AgentID: "ag-1", Since: t0 + 1}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.at.validate(); err != nil {
				t.Errorf("at the limit: %v, want it admitted", err)
			}
			if err := tc.after.validate(); !errors.Is(err, protocol.ErrInvalidArgument) {
				t.Errorf("past the limit: %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// TestClip: names up to 64 bytes appear whole in error messages, longer
// ones cut with "...". It fails with the cut made at 64 bytes already.
func TestClip(t *testing.T) {
	t.Parallel()
	at, past := strings.Repeat("a", 64), strings.Repeat("a", 65)
	if got := clip(at); got != at {
		t.Errorf("clip of 64 bytes: %q", got)
	}
	if got := clip(past); got != at+"..." {
		t.Errorf("clip of 65 bytes: %q", got)
	}
}

// TestView_nextUUID: the state's own status UUIDs count up from 1 across
// commands, so they say in what order the state made them. It fails with
// the count going down.
func TestView_nextUUID(t *testing.T) {
	t.Parallel()
	var v View
	for i, want := range []string{"st-7-1", "st-7-2", "st-9-3"} {
		index := uint64(7)
		if i == 2 {
			index = 9
		}
		if got := v.nextUUID(index); string(got) != want {
			t.Errorf("UUID %d: %s, want %s", i, got, want)
		}
	}
}
