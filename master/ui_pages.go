package master

import (
	"bytes"
	_ "embed"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// The web UI's pages beside the overview (ui.go): one per agent, framework,
// task and role, each rendered on the leader from the same state as GET
// /v1/state, with what the reader may see of it (a principal sees its own
// frameworks and their tasks, and every agent and role). The overview and
// the pages link to each other; the operator's actions are on them too.
//
//	GET /ui/agents/{id}
//	GET /ui/frameworks/{id}             its tasks and why it is (not) offered resources
//	GET /ui/frameworks/{id}/tasks/{task}
//	GET /ui/roles/{path...}             its standing, quota, children and frameworks

//go:embed ui_pages.html
var uiPagesSource string

// uiAgentPage is what the agent page renders.
type uiAgentPage struct {
	Operator bool
	Agent    api.Agent
	// Used is what its tasks that are not terminal hold.
	Used          protocol.Resources
	Active, Ended []api.Task
}

// uiFrameworkPage is what the framework page renders.
type uiFrameworkPage struct {
	Operator  bool
	Framework api.Framework
	// Removed is a completed framework's.
	Removed bool
	Active  []api.Task
	// Explanation is nil for a removed framework.
	Explanation *api.Explanation
}

// uiTaskPage is what the task page renders.
type uiTaskPage struct {
	Operator  bool
	Task      api.Task
	Framework api.Framework
	Agent     *api.Agent
}

// uiRolePage is what the role page renders.
type uiRolePage struct {
	Operator   bool
	Role       api.Role
	Children   []api.Role
	Frameworks []api.Framework
	// Demanding reports demand declared below the role and not met;
	// Starving, that and nothing held.
	Demanding, Starving bool
	// Short is what the role lacks of its guarantee; Fair its H-DRF fair
	// share as a quantity, when the leader's allocator has one.
	Short, Fair protocol.Resources
}

func (m *Master) serveUIAgent(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	s := filterState(m.currentState(l), v)
	id := protocol.AgentID(r.PathValue("id"))
	i := slices.IndexFunc(s.Agents, func(a api.Agent) bool { return a.ID == id })
	if i < 0 {
		uiNotFound(w, "agent", string(id))
		return
	}
	p := uiAgentPage{Operator: v.operator, Agent: s.Agents[i]}
	for _, t := range s.Tasks {
		if t.AgentID != id {
			continue
		}
		if t.State.Terminal() {
			p.Ended = append(p.Ended, t)
			continue
		}
		p.Active = append(p.Active, t)
		p.Used = p.Used.Add(t.Resources)
	}
	renderUI(w, "agent", p)
}

func (m *Master) serveUIFramework(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	s := filterState(m.currentState(l), v)
	id := protocol.FrameworkID(r.PathValue("id"))
	p := uiFrameworkPage{Operator: v.operator}
	if i := slices.IndexFunc(s.Frameworks, func(f api.Framework) bool { return f.ID == id }); i >= 0 {
		p.Framework = s.Frameworks[i]
	} else if i := slices.IndexFunc(s.CompletedFrameworks, func(f api.Framework) bool { return f.ID == id }); i >= 0 {
		p.Framework, p.Removed = s.CompletedFrameworks[i], true
	} else {
		// Another principal's framework is as unknown as a missing one.
		uiNotFound(w, "framework", string(id))
		return
	}
	for _, t := range s.Tasks {
		if t.FrameworkID == id && !t.State.Terminal() {
			p.Active = append(p.Active, t)
		}
	}
	if !p.Removed {
		ex, err := m.explain(l, id)
		switch {
		case err == nil:
			p.Explanation = &ex
		case !errors.Is(err, offers.ErrUnknownFramework):
			writeJSON(w, http.StatusInternalServerError, api.Error{Error: err.Error()})
			return
		}
	}
	renderUI(w, "framework", p)
}

func (m *Master) serveUITask(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	s := filterState(m.currentState(l), v)
	fw, id := protocol.FrameworkID(r.PathValue("id")), protocol.TaskID(r.PathValue("task"))
	p := uiTaskPage{Operator: v.operator}
	found := false
	for _, f := range slices.Concat(s.Frameworks, s.CompletedFrameworks) {
		if f.ID != fw {
			continue
		}
		p.Framework = f
		for _, t := range slices.Concat(s.Tasks, f.CompletedTasks) {
			if t.FrameworkID == fw && t.TaskID == id {
				p.Task, found = t, true
				break
			}
		}
	}
	if !found {
		uiNotFound(w, "task", string(id))
		return
	}
	if i := slices.IndexFunc(s.Agents, func(a api.Agent) bool { return a.ID == p.Task.AgentID }); i >= 0 {
		p.Agent = &s.Agents[i]
	}
	renderUI(w, "task", p)
}

func (m *Master) serveUIRole(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	s := filterState(m.currentState(l), v)
	path := strings.Trim(r.PathValue("path"), "/")
	i := slices.IndexFunc(s.Roles, func(x api.Role) bool { return x.Path == path })
	if i < 0 {
		uiNotFound(w, "role", path)
		return
	}
	p := uiRolePage{Operator: v.operator, Role: s.Roles[i]}
	for _, x := range s.Roles {
		if parent, _, ok := cutLast(x.Path); ok && parent == path || !ok && path == "" && x.Path != "" {
			p.Children = append(p.Children, x)
		}
	}
	for _, f := range s.Frameworks {
		if f.Role == path {
			p.Frameworks = append(p.Frameworks, f)
		}
	}
	if shares, ok := m.roleShares(); ok {
		for _, n := range shares {
			if !n.Framework && n.Path == path {
				p.Demanding = n.Demanding
				p.Starving = n.Demanding && n.Allocation.IsEmpty()
			}
		}
	}
	p.Short = shortOfGuarantee(p.Role)
	if fair, ok := m.fairShares(); ok {
		// Every framework counts, whoever reads: a role's fair share
		// depends on all of them, and the sum names none.
		roleOf := map[protocol.FrameworkID]string{}
		for _, f := range m.View().Frameworks() {
			roleOf[f.ID] = f.Role
		}
		p.Fair = roleFairShares(fair, roleOf)[path]
	}
	renderUI(w, "role", p)
}

// shortOfGuarantee is what r lacks of its guarantee (empty without one).
func shortOfGuarantee(r api.Role) protocol.Resources {
	var short protocol.Resources
	if g := r.Guarantee; g != nil {
		for name, want := range g.Scalars {
			if have := r.Allocation.Scalar(name); have < want {
				short = short.Add(protocol.Scalars(map[string]int64{name: want - have}))
			}
		}
	}
	return short
}

// cutLast splits a role path at its last slash.
func cutLast(path string) (parent, name string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", path, false
	}
	return path[:i], path[i+1:], true
}

// renderUI renders page name of the UI's templates.
func renderUI(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := uiTemplate.ExecuteTemplate(&buf, name, data); err != nil {
		writeJSON(w, http.StatusInternalServerError, api.Error{Error: "render: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", uiCSP)
	_, _ = w.Write(buf.Bytes())
}

// uiNotFound answers a page for something the reader cannot see.
func uiNotFound(w http.ResponseWriter, what, id string) {
	writeJSON(w, http.StatusNotFound, api.Error{Error: "unknown " + what + " " + id})
}
