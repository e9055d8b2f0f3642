package master

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// Who reads the operator API. Where framework credentials are configured,
// the cluster is shared by tenants, and its read endpoints (the state, the
// event stream, explanations, coflows, the web UI) show a principal only
// its own frameworks and tasks, as Mesos's view ACLs do; the operator
// token shows everything. A principal authenticates with HTTP basic
// authentication (its name and secret); the operator with
// "Authorization: Bearer <token>", or basic authentication as user
// "operator" with the token as password, which a browser can send.

// operatorUser is the basic-authentication user name of the operator.
const operatorUser = "operator"

// viewer is who reads: the operator, or one framework principal.
type viewer struct {
	operator  bool
	principal string
}

// sees reports whether the viewer may see a framework of principal.
func (v viewer) sees(principal string) bool { return v.operator || principal == v.principal }

// isOperator reports whether r carries the operator token. Without one
// configured, everyone who reaches the API is the operator, unless tenants
// share the cluster (framework credentials): then nobody is.
func (m *Master) isOperator(r *http.Request) bool {
	want := m.cfg.OperatorToken
	if want == "" {
		return len(m.cfg.Credentials) == 0
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		user, pass, basic := r.BasicAuth()
		got, ok = pass, basic && user == operatorUser
	}
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// viewerOf authenticates a read. Without framework credentials every
// reader is the operator, as the cluster is not shared by tenants who
// need keeping apart; with them, the reader is the operator or the
// principal whose secret it gives, and anyone else is refused.
func (m *Master) viewerOf(r *http.Request) (viewer, bool) {
	if len(m.cfg.Credentials) == 0 {
		return viewer{operator: true}, true
	}
	if m.isOperator(r) { // with credentials, only with the token
		return viewer{operator: true}, true
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user == operatorUser {
		return viewer{}, false
	}
	secret, known := m.cfg.Credentials[user]
	// Compared even for an unknown principal, so the time taken does not
	// tell which principals exist.
	match := subtle.ConstantTimeCompare([]byte(pass), []byte(secret)) == 1
	if !known || !match || secret == "" {
		return viewer{}, false
	}
	return viewer{principal: user}, true
}

// viewing serves a read with the reader's view, or answers 401 to a
// reader who is neither the operator nor a principal.
func (m *Master) viewing(h func(http.ResponseWriter, *http.Request, viewer)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := m.viewerOf(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="allot"`)
			writeJSON(w, http.StatusUnauthorized, api.Error{Error: "reading this cluster needs a principal's credential " +
				"(basic authentication: name and secret) or the operator token"})
			return
		}
		h(w, r, v)
	}
}

// viewingLeader is viewing for a leader-only read (leaderOnly).
func (m *Master) viewingLeader(h func(http.ResponseWriter, *http.Request, *leader, viewer)) http.HandlerFunc {
	return m.viewing(func(w http.ResponseWriter, r *http.Request, v viewer) {
		m.leaderOnly(func(w http.ResponseWriter, r *http.Request, l *leader) { h(w, r, l, v) })(w, r)
	})
}

// frameworkPrincipal is the principal a framework, current or completed,
// registered with.
func (m *Master) frameworkPrincipal(id protocol.FrameworkID) (string, bool) {
	v := m.View()
	if f, ok := v.Framework(id); ok {
		return f.Principal, true
	}
	for _, cf := range v.CompletedFrameworks() {
		if cf.Framework.ID == id {
			return cf.Framework.Principal, true
		}
	}
	return "", false
}

// seesFramework reports whether v may see framework id.
func (m *Master) seesFramework(v viewer, id protocol.FrameworkID) bool {
	if v.operator {
		return true
	}
	p, ok := m.frameworkPrincipal(id)
	return ok && v.sees(p)
}

// filterState keeps what v may see of s: every agent and role, and only
// v's frameworks with their tasks and offers.
func filterState(s api.State, v viewer) api.State {
	if v.operator {
		return s
	}
	mine := map[protocol.FrameworkID]bool{}
	keep := func(fws []api.Framework) []api.Framework {
		out := []api.Framework{}
		for _, f := range fws {
			if v.sees(f.Principal) {
				out = append(out, f)
				mine[f.ID] = true
			}
		}
		return out
	}
	s.Frameworks = keep(s.Frameworks)
	s.CompletedFrameworks = keep(s.CompletedFrameworks)
	tasks := []api.Task{}
	for _, t := range s.Tasks {
		if mine[t.FrameworkID] {
			tasks = append(tasks, t)
		}
	}
	s.Tasks = tasks
	offers := []api.Offer{}
	for _, o := range s.Offers {
		if mine[o.FrameworkID] {
			offers = append(offers, o)
		}
	}
	s.Offers = offers
	return s
}

// filterCoflows keeps v's frameworks' coflows.
func (m *Master) filterCoflows(c api.Coflows, v viewer) api.Coflows {
	if v.operator {
		return c
	}
	out := c
	out.Coflows = []api.Coflow{}
	for _, cf := range c.Coflows {
		if m.seesFramework(v, protocol.FrameworkID(cf.FrameworkID)) {
			out.Coflows = append(out.Coflows, cf)
		}
	}
	return out
}

// seesEvent reports whether v may see a cluster event: agents' events
// (and operator actions on agents) are everyone's; frameworks', tasks',
// preemptions' and operator actions on frameworks their principal's.
func (m *Master) seesEvent(v viewer, ev protocol.ClusterEvent) bool {
	switch {
	case v.operator || ev.Agent != nil:
		return true
	case ev.Task != nil:
		return m.seesFramework(v, ev.Task.FrameworkID)
	case ev.Framework != nil:
		return m.seesFramework(v, ev.Framework.FrameworkID)
	case ev.Preemption != nil:
		return m.seesFramework(v, ev.Preemption.FrameworkID)
	case ev.Operator != nil:
		return ev.Operator.FrameworkID == "" || m.seesFramework(v, ev.Operator.FrameworkID)
	}
	return false
}
