package master

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
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
	"depth": func(path string) int { return strings.Count(path, "/") },
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
	State      api.State
	Active     []api.Task // tasks that have not ended
	TaskCounts map[protocol.FrameworkID]int
	AgentTasks map[protocol.AgentID]int
	Coflows    api.Coflows
}

func (m *Master) serveUI(w http.ResponseWriter, _ *http.Request, l *leader, v viewer) {
	p := uiPage{Operator: v.operator, Leader: m.leaderInfo(), State: filterState(m.currentState(l), v), Coflows: m.filterCoflows(l.coflowsJSON(), v),
		TaskCounts: map[protocol.FrameworkID]int{}, AgentTasks: map[protocol.AgentID]int{}}
	for _, t := range p.State.Tasks {
		if !t.State.Terminal() {
			p.Active = append(p.Active, t)
			p.TaskCounts[t.FrameworkID]++
			p.AgentTasks[t.AgentID]++
		}
	}
	var buf bytes.Buffer
	if err := uiTemplate.Execute(&buf, p); err != nil {
		writeJSON(w, http.StatusInternalServerError, api.Error{Error: "render: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", uiCSP)
	_, _ = w.Write(buf.Bytes())
}

// serveUIScript serves the page's script.
func (m *Master) serveUIScript(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(uiScript)
}
