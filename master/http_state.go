package master

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// The JSON shapes of the operator HTTP API. Keys are snake_case and every
// key is always present (null when unset), so clients can rely on the
// shape. Lists are sorted (agents and frameworks by ID, tasks by framework
// then task ID, roles by path, offers by ID) and maps are emitted with
// sorted keys, so equal state renders to equal bytes. Times are RFC 3339
// strings in UTC with nanoseconds, or null when unset.

// leaderJSON answers GET /v1/leader.
type leaderJSON struct {
	// LeaderID and LeaderRaftAddr are the Raft leader as this master's
	// Raft node knows it; empty during an election.
	LeaderID       string `json:"leader_id"`
	LeaderRaftAddr string `json:"leader_raft_addr"`
	// LeaderHTTPAddr is the leader's operator API: this master's own on
	// the leader, else the latest leader announcement from that leader
	// (empty until one arrives).
	LeaderHTTPAddr string `json:"leader_http_addr"`
	SelfID         string `json:"self_id"`
	// IsLeader reports whether this master serves as the leader (elected
	// and past its barrier).
	IsLeader bool `json:"is_leader"`
	// RaftIndex is the index of the last command applied to this master's
	// replicated state.
	RaftIndex uint64 `json:"raft_index"`
}

// stateJSON answers GET /v1/state.
type stateJSON struct {
	RaftIndex  uint64          `json:"raft_index"`
	Agents     []agentJSON     `json:"agents"`
	Frameworks []frameworkJSON `json:"frameworks"`
	Tasks      []taskJSON      `json:"tasks"`
	Roles      []roleJSON      `json:"roles"`
	Offers     []offerJSON     `json:"offers"`
	// CompletedFrameworks are removed frameworks, in the order they were
	// removed, each with its completed tasks.
	CompletedFrameworks []frameworkJSON `json:"completed_frameworks"`
}

type agentJSON struct {
	ID       protocol.AgentID `json:"id"`
	Hostname string           `json:"hostname"`
	// HTTP is the agent's file and shuffle server (host:port).
	HTTP         string             `json:"http"`
	State        string             `json:"state"`
	Resources    protocol.Resources `json:"resources"`
	Attributes   map[string]any     `json:"attributes"`
	RegisteredAt *string            `json:"registered_at"`
}

type frameworkJSON struct {
	ID             protocol.FrameworkID `json:"id"`
	Name           string               `json:"name"`
	Principal      string               `json:"principal"`
	Role           string               `json:"role"`
	Weight         float64              `json:"weight"`
	Connected      bool                 `json:"connected"`
	DisconnectedAt *string              `json:"disconnected_at"`
	Suppressed     bool                 `json:"suppressed"`
	// FailoverTimeout is in seconds.
	FailoverTimeout float64 `json:"failover_timeout"`
	// CompletedTasks are the framework's most recent tasks that ended and
	// whose end it acknowledged, oldest first (state.MaxCompletedTasks).
	CompletedTasks []taskJSON `json:"completed_tasks"`
}

type taskJSON struct {
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	TaskID      protocol.TaskID      `json:"task_id"`
	AgentID     protocol.AgentID     `json:"agent_id"`
	State       protocol.TaskState   `json:"state"`
	Reason      string               `json:"reason"`
	Acked       bool                 `json:"acked"`
	Resources   protocol.Resources   `json:"resources"`
	Kind        protocol.OfferKind   `json:"kind"`
}

// roleJSON is one role of the allocator's tree (frameworks, the tree's
// leaves, are not listed here) with its current standing.
type roleJSON struct {
	Path   string  `json:"path"`
	Weight float64 `json:"weight"`
	// DominantShare is the share H-DRF orders siblings by (unweighted,
	// after the policy's rescaling).
	DominantShare float64 `json:"dominant_share"`
	// Allocation is what the role's subtree runs and holds in outstanding
	// offers; Shares is that over cluster capacity, per resource name.
	Allocation protocol.Resources `json:"allocation"`
	Shares     map[string]float64 `json:"shares"`
	// Limit is the role's quota limit, when it has one.
	Limit *protocol.Resources `json:"limit,omitempty"`
}

type offerJSON struct {
	ID          protocol.OfferID     `json:"id"`
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	AgentID     protocol.AgentID     `json:"agent_id"`
	Resources   protocol.Resources   `json:"resources"`
	Kind        string               `json:"kind"`
	Expires     *string              `json:"expires"`
}

// errorJSON is the body of every HTTP error.
type errorJSON struct {
	Error string `json:"error"`
	// LeaderID names the leader when a follower cannot redirect to it.
	LeaderID string `json:"leader_id,omitempty"`
}

// buildState renders the replicated state v and the leader's soft state
// (the allocator's role shares and outstanding offers) as JSON.
func buildState(v *state.View, shares []offers.NodeShare, outstanding []offers.Offer) stateJSON {
	out := stateJSON{
		RaftIndex:  v.Index(),
		Agents:     []agentJSON{},
		Frameworks: []frameworkJSON{},
		Tasks:      []taskJSON{},
		Roles:      []roleJSON{},
		Offers:     []offerJSON{},
	}
	for _, a := range v.Agents() {
		out.Agents = append(out.Agents, agentJSON{
			ID: a.ID, Hostname: a.Hostname, HTTP: a.HTTPAddr, State: string(a.State),
			Resources: a.Resources, Attributes: attributesJSON(a.Attributes),
			RegisteredAt: unixNanoJSON(a.RegisteredAt),
		})
	}
	for _, f := range v.Frameworks() {
		out.Frameworks = append(out.Frameworks, frameworkToJSON(f, v.CompletedTasks(f.ID)))
	}
	for _, t := range v.Tasks() {
		out.Tasks = append(out.Tasks, taskToJSON(t))
	}
	out.CompletedFrameworks = []frameworkJSON{}
	for _, cf := range v.CompletedFrameworks() {
		out.CompletedFrameworks = append(out.CompletedFrameworks, frameworkToJSON(cf.Framework, cf.Tasks))
	}
	for _, s := range shares {
		if s.Framework || s.Path == "" { // leaves are frameworks; "" is the root
			continue
		}
		r := roleJSON{
			Path: s.Path, Weight: finite(s.Weight), DominantShare: finite(s.DominantShare),
			Allocation: s.Allocation, Shares: finiteMap(s.Shares),
		}
		if cfg, ok := v.Role(s.Path); ok && cfg.Quota != nil && !cfg.Quota.Limit.IsEmpty() {
			r.Limit = &cfg.Quota.Limit
		}
		out.Roles = append(out.Roles, r)
	}
	slices.SortFunc(out.Roles, func(a, b roleJSON) int { return cmp.Compare(a.Path, b.Path) })
	for _, o := range outstanding {
		var expires *string
		if !o.Expires.IsZero() {
			expires = timeJSON(o.Expires)
		}
		out.Offers = append(out.Offers, offerJSON{
			ID: o.ID, FrameworkID: o.FrameworkID, AgentID: o.AgentID, Resources: o.Resources,
			Kind: string(o.Kind), Expires: expires,
		})
	}
	slices.SortFunc(out.Offers, func(a, b offerJSON) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func frameworkToJSON(f *state.Framework, completed []*state.Task) frameworkJSON {
	out := frameworkJSON{
		ID: f.ID, Name: f.Name, Principal: f.Principal, Role: f.Role, Weight: finite(f.Weight),
		Connected: f.Connected, DisconnectedAt: unixNanoJSON(f.DisconnectedAt),
		Suppressed: f.Suppressed, FailoverTimeout: f.FailoverTimeout.Seconds(),
		CompletedTasks: make([]taskJSON, 0, len(completed)),
	}
	for _, t := range completed {
		out.CompletedTasks = append(out.CompletedTasks, taskToJSON(t))
	}
	return out
}

func taskToJSON(t *state.Task) taskJSON {
	return taskJSON{
		FrameworkID: t.FrameworkID, TaskID: t.ID, AgentID: t.AgentID, State: t.State,
		Reason: t.Reason, Acked: t.Acked, Resources: t.Info.Resources, Kind: t.Kind,
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
