package master

import (
	"context"
	_ "embed"
	"html/template"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// GET /ui/ is the web UI: one page, rendered on the leader from the same
// state as GET /v1/state, that reloads itself every few seconds: the
// cluster at a glance, the role tree with its shares and quotas, the
// frameworks (each with a link to its explanation), agents, outstanding
// offers, the shuffles ordered as coflows and the tasks that have not
// ended. GET / redirects to it.
//
// For the operator (the page's viewer), the page also has the operator
// actions: a Kill button per live task, a Teardown button per framework,
// and per agent a drain with an optional deadline (and Activate while it
// drains). GET /ui/ui.js (any master, no credential: it holds no data)
// posts them to the operator API with the operator token, which it asks
// for on a 401 and keeps in the tab's sessionStorage.

//go:embed ui.html
var uiSource string

//go:embed ui.js
var uiScript []byte

// uiCSP lets the page load its own script and call its own API, and
// nothing else.
const uiCSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'"

var uiTemplate = template.Must(template.New("ui").Funcs(template.FuncMap{
	"res": api.FormatResources,
	"quota": func(r *protocol.Resources) string {
		if r == nil {
			return ""
		}
		return api.FormatResources(*r)
	},
	"depth":          func(path string) int { return strings.Count(path, "/") },
	"principalToken": protocol.PrincipalToken,
	"join":           func(dir, name string) string { return path.Join(dir, name) },
	"health": func(h *bool) string {
		switch {
		case h == nil:
			return ""
		case *h:
			return "healthy"
		}
		return "unhealthy"
	},
	"percent": func(share float64) float64 {
		return min(100, max(0, share*100))
	},
}).Parse(uiSource + uiPagesSource))

// uiPage is what the template renders.
type uiPage struct {
	// Operator shows the operator actions.
	Operator   bool
	Leader     api.Leader
	Raft       uiRaft
	State      api.State
	Active     []api.Task // tasks that have not ended
	Ended      []api.Task // tasks that ended: not yet acknowledged, then completed (the last uiEnded)
	TaskCounts map[protocol.FrameworkID]int
	AgentTasks map[protocol.AgentID]int
	Coflows    api.Coflows
	// Filter keeps the frameworks, agents and tasks that mention it
	// (?filter=).
	Filter string
}

// uiRaft is the replicated log's health as the leader sees it.
type uiRaft struct {
	Term, Commit, Applied uint64
	Peers                 []api.RaftPeer
	Err                   string
}

// uiEnded is how many of the tasks that ended the overview lists.
const uiEnded = 20

func (m *Master) serveUI(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	p := uiPage{Operator: v.operator, Leader: m.leaderInfo(), State: filterState(m.currentState(l), v), Coflows: m.filterCoflows(l.coflowsJSON(), v),
		TaskCounts: map[protocol.FrameworkID]int{}, AgentTasks: map[protocol.AgentID]int{},
		Filter: strings.TrimSpace(r.URL.Query().Get("filter"))}
	if v.operator {
		// The masters and their addresses are shown to the operator
		// only: tenants have no use for them.
		p.Raft = m.uiRaft(r.Context())
	}
	for _, t := range p.State.Tasks {
		if !t.State.Terminal() {
			p.TaskCounts[t.FrameworkID]++
			p.AgentTasks[t.AgentID]++
			p.Active = append(p.Active, t)
		} else {
			p.Ended = append(p.Ended, t)
		}
	}
	for _, f := range p.State.CompletedFrameworks {
		p.Ended = append(p.Ended, f.CompletedTasks...)
	}
	for _, f := range p.State.Frameworks {
		p.Ended = append(p.Ended, f.CompletedTasks...)
	}
	p.Ended = p.Ended[max(0, len(p.Ended)-uiEnded):]
	if p.Filter != "" {
		p.filter()
	}
	renderUI(w, "ui", p)
}

// uiRaft reads the replicated log's health.
func (m *Master) uiRaft(ctx context.Context) uiRaft {
	n := m.node
	out := uiRaft{Term: n.Term(), Commit: n.CommitIndex(), Applied: n.AppliedIndex()}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	peers, err := m.raftPeers(ctx)
	if err != nil {
		out.Err = err.Error()
	}
	out.Peers = peers
	return out
}

// filter keeps the frameworks, agents and tasks that mention p.Filter in
// an ID, a name, a role, a principal, a hostname or a state, and the tasks
// of the frameworks and agents kept.
func (p *uiPage) filter() {
	has := func(fields ...string) bool {
		for _, f := range fields {
			if strings.Contains(strings.ToLower(f), strings.ToLower(p.Filter)) {
				return true
			}
		}
		return false
	}
	fws, agents := map[protocol.FrameworkID]bool{}, map[protocol.AgentID]bool{}
	p.State.Frameworks = slices.DeleteFunc(p.State.Frameworks, func(f api.Framework) bool {
		fws[f.ID] = has(string(f.ID), f.Name, f.Role, f.Principal)
		return !fws[f.ID]
	})
	p.State.Agents = slices.DeleteFunc(p.State.Agents, func(a api.Agent) bool {
		agents[a.ID] = has(string(a.ID), a.Hostname, a.State)
		return !agents[a.ID]
	})
	// A task stays with its framework or its agent, or on its own.
	task := func(t api.Task) bool {
		return !fws[t.FrameworkID] && !agents[t.AgentID] && !has(string(t.TaskID), string(t.State), t.Reason)
	}
	p.Active, p.Ended = slices.DeleteFunc(p.Active, task), slices.DeleteFunc(p.Ended, task)
}

// serveUIScript serves the page's script.
func (m *Master) serveUIScript(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(uiScript)
}
