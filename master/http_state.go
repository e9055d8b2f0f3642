package master

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// buildState renders the replicated state v and the leader's soft state
// (the allocator's role shares and outstanding offers) as JSON.
func buildState(v *state.View, shares []offers.NodeShare, outstanding []offers.Offer) api.State {
	out := api.State{
		RaftIndex:  v.Index(),
		Agents:     []api.Agent{},
		Frameworks: []api.Framework{},
		Tasks:      []api.Task{},
		Roles:      []api.Role{},
		Offers:     []api.Offer{},
	}
	for _, a := range v.Agents() {
		out.Agents = append(out.Agents, api.Agent{
			ID: a.ID, Hostname: a.Hostname, HTTP: a.HTTPAddr, State: string(a.State),
			Resources: a.Resources, Attributes: attributesJSON(a.Attributes),
			RegisteredAt: unixNanoJSON(a.RegisteredAt), DrainDeadline: unixNanoJSON(a.DrainDeadline),
			Drained: a.State == state.AgentDraining && len(liveTasks(v, a.ID)) == 0,
		})
	}
	for _, f := range v.Frameworks() {
		out.Frameworks = append(out.Frameworks, frameworkToJSON(f, v.CompletedTasks(f.ID)))
	}
	for _, t := range v.Tasks() {
		out.Tasks = append(out.Tasks, taskToJSON(t))
	}
	out.CompletedFrameworks = []api.Framework{}
	for _, cf := range v.CompletedFrameworks() {
		out.CompletedFrameworks = append(out.CompletedFrameworks, frameworkToJSON(cf.Framework, cf.Tasks))
	}
	for _, s := range shares {
		if s.Framework || s.Path == "" { // leaves are frameworks; "" is the root
			continue
		}
		r := api.Role{
			Path: s.Path, Weight: finite(s.Weight), DominantShare: finite(s.DominantShare),
			Allocation: s.Allocation, Shares: finiteMap(s.Shares),
		}
		if cfg, ok := v.Role(s.Path); ok {
			r.OfferConstraints = cfg.OfferConstraints
			r.Preemption = cfg.Preemption
			if q := cfg.Quota; q != nil && !q.Limit.IsEmpty() {
				r.Limit = &q.Limit
			}
			if q := cfg.Quota; q != nil && !q.Guarantee.IsEmpty() {
				r.Guarantee = &q.Guarantee
			}
		}
		out.Roles = append(out.Roles, r)
	}
	slices.SortFunc(out.Roles, func(a, b api.Role) int { return cmp.Compare(a.Path, b.Path) })
	for _, o := range outstanding {
		var expires *string
		if !o.Expires.IsZero() {
			expires = timeJSON(o.Expires)
		}
		out.Offers = append(out.Offers, api.Offer{
			ID: o.ID, FrameworkID: o.FrameworkID, AgentID: o.AgentID, Resources: o.Resources,
			Kind: string(o.Kind), Expires: expires,
		})
	}
	slices.SortFunc(out.Offers, func(a, b api.Offer) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func frameworkToJSON(f *state.Framework, completed []*state.Task) api.Framework {
	out := api.Framework{
		ID: f.ID, Name: f.Name, Principal: f.Principal, Role: f.Role, Weight: finite(f.Weight),
		Connected: f.Connected, DisconnectedAt: unixNanoJSON(f.DisconnectedAt),
		Suppressed: f.Suppressed, FailoverTimeout: f.FailoverTimeout.Seconds(),
		CompletedTasks: make([]api.Task, 0, len(completed)),
	}
	for _, t := range completed {
		out.CompletedTasks = append(out.CompletedTasks, taskToJSON(t))
	}
	return out
}

func taskToJSON(t *state.Task) api.Task {
	return api.Task{
		FrameworkID: t.FrameworkID, TaskID: t.ID, AgentID: t.AgentID, State: t.State,
		Reason: t.Reason, Acked: t.Acked, Resources: t.Info.Resources, Kind: t.Kind, Healthy: t.Status.Healthy,
	}
}

// attributesJSON renders attributes as plain JSON values: text as a
// string, a number as a number, a set as a sorted list of strings.
func attributesJSON(attrs protocol.Attributes) map[string]any {
	out := make(map[string]any, len(attrs))
	for k, v := range attrs {
		switch v.Kind {
		case protocol.KindNumber:
			out[k] = finite(v.Number)
		case protocol.KindSet:
			set := slices.Clone(v.Set)
			if set == nil {
				set = []string{}
			}
			slices.Sort(set)
			out[k] = set
		default:
			out[k] = v.Text
		}
	}
	return out
}

func unixNanoJSON(ns int64) *string {
	if ns == 0 {
		return nil
	}
	return timeJSON(time.Unix(0, ns))
}

func timeJSON(t time.Time) *string {
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// finite keeps encoding/json working: it refuses NaN and infinities.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func finiteMap(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = finite(v)
	}
	return out
}
