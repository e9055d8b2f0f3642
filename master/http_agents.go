package master

import (
	"context"
	"errors"
	"net/http"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// Operator actions on agents:
//
//	POST /v1/agents/{id}/drain     stop offering the agent; its tasks keep running.
//	POST /v1/agents/{id}/activate  offer it again.
//	POST /v1/agents/{id}/gone      take it out for good (its tasks LOST, agent_gone).
//
// Each answers {"agent_id": ..., "state": ...}; the leader serves them
// (followers redirect with 307, which keeps the method). With
// Config.OperatorToken set they need "Authorization: Bearer <token>".

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

// serveAgentDraining drains an agent (draining) or activates it.
func (m *Master) serveAgentDraining(draining bool) func(http.ResponseWriter, *http.Request, *leader) {
	return m.serveAgentAction(func(ctx context.Context, l *leader, id protocol.AgentID) (*state.Agent, error) {
		return l.setDraining(ctx, id, draining)
	})
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
		ctx, cancel := context.WithTimeout(r.Context(), m.cfg.RequestTimeout)
		defer cancel()
		a, err := act(ctx, l, id)
		switch {
		case err == nil && a != nil:
			writeJSON(w, http.StatusOK, api.AgentState{AgentID: string(a.ID), State: string(a.State)})
		case errors.Is(err, protocol.ErrUnknownAgent):
			writeJSON(w, http.StatusNotFound, api.Error{Error: err.Error()})
		case errors.Is(err, protocol.ErrInvalidArgument):
			writeJSON(w, http.StatusConflict, api.Error{Error: err.Error()})
		case err == nil:
			writeJSON(w, http.StatusInternalServerError, api.Error{Error: "no agent in the result"})
		default:
			writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: err.Error()})
		}
	}
}
