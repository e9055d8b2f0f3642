package master

import (
	"context"
	"net/http"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// Operator actions on agents:
//
//	POST /v1/agents/{id}/drain     stop offering the agent; its tasks keep running,
//	                               until the deadline of an optional body
//	                               {"deadline": "10m"} (drain_deadline.go).
//	POST /v1/agents/{id}/activate  offer it again (lifting a drain's deadline).
//	POST /v1/agents/{id}/gone      take it out for good (its tasks LOST, agent_gone).
//
// Each answers {"agent_id": ..., "state": ..., "drain_deadline": ...}; the
// leader serves them (followers redirect with 307, which keeps the method
// and body). With Config.OperatorToken set they need
// "Authorization: Bearer <token>".

// operatorOnly lets a request through when no operator token is configured
// or when it carries the token.
func (m *Master) operatorOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !m.isOperator(r) {
			msg := "this action needs the operator token"
			if m.cfg.OperatorToken == "" {
				msg += " (the masters have framework credentials and no operator token: start them with --operator-token)"
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="allot"`)
			writeJSON(w, http.StatusUnauthorized, api.Error{Error: msg})
			return
		}
		h(w, r)
	}
}

// serveAgentDrain drains an agent, with the deadline its body may give:
// a Go duration from now, not negative ("0s": at once). A bad body is
// refused (400, ErrInvalidArgument) and changes nothing.
func (m *Master) serveAgentDrain(w http.ResponseWriter, r *http.Request, l *leader) {
	var req api.DrainRequest
	if err := decodeOptionalJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	var deadline int64
	if req.Deadline != "" {
		d, err := time.ParseDuration(req.Deadline)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, protocol.Errorf(protocol.ErrInvalidArgument,
				"deadline %q: want a duration that is not negative, e.g. \"10m\"", clipText(req.Deadline)))
			return
		}
		deadline = time.Now().Add(d).UnixNano()
	}
	m.serveAgentAction(func(ctx context.Context, l *leader, id protocol.AgentID) (*state.Agent, error) {
		return l.setDraining(ctx, id, true, deadline)
	})(w, r, l)
}

// serveAgentActivate makes a draining agent active again.
func (m *Master) serveAgentActivate(w http.ResponseWriter, r *http.Request, l *leader) {
	m.serveAgentAction(func(ctx context.Context, l *leader, id protocol.AgentID) (*state.Agent, error) {
		return l.setDraining(ctx, id, false, 0)
	})(w, r, l)
}

// serveAgentGone marks an agent gone.
func (m *Master) serveAgentGone(w http.ResponseWriter, r *http.Request, l *leader) {
	m.serveAgentAction(func(ctx context.Context, l *leader, id protocol.AgentID) (*state.Agent, error) {
		return l.markGone(ctx, id)
	})(w, r, l)
}

// serveAgentAction serves an operator action on the agent the path names.
func (m *Master) serveAgentAction(act func(context.Context, *leader, protocol.AgentID) (*state.Agent, error)) func(http.ResponseWriter, *http.Request, *leader) {
	return func(w http.ResponseWriter, r *http.Request, l *leader) {
		id := protocol.AgentID(r.PathValue("id"))
		if !protocol.ValidID(string(id)) {
			writeJSON(w, http.StatusBadRequest, api.Error{Error: "not an agent id"})
			return
		}
		ctx, cancel := l.requestContext(r.Context())
		defer cancel()
		a, err := act(ctx, l, id)
		switch {
		case err == nil && a != nil:
			writeJSON(w, http.StatusOK, api.AgentState{AgentID: string(a.ID), State: string(a.State),
				DrainDeadline: unixNanoJSON(a.DrainDeadline)})
		case err == nil:
			writeJSON(w, http.StatusInternalServerError, api.Error{Error: "no agent in the result"})
		default:
			writeError(w, errorStatus(err), err)
		}
	}
}
