package master

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// PUT /v1/roles/{path...} configures a role (operator action; leader only,
// guarded by Config.OperatorToken): body {"weight": 2, "guarantee":
// {"cpus": 4000}, "limit": {"cpus": 8000, "mem": 16384}}. What the body
// leaves out keeps its current setting (api.RoleRequest); a new role
// starts from weight 1 and no quota. A guarantee may not exceed the limit
// in any resource. "offer_constraints", e.g. [{"attribute": "pool", "op":
// "==", "value": "gpu"}], keep the role's frameworks to the agents that
// satisfy them. Answers the role as configured, with warnings (a
// guarantee beyond what the agents hold).

// maxRoleBody bounds the body of a role request.
const maxRoleBody = 64 << 10

func (m *Master) serveSetRole(w http.ResponseWriter, r *http.Request, l *leader) {
	path := r.PathValue("path")
	if !protocol.ValidRole(path) {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "not a role path"})
		return
	}
	var req api.RoleRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRoleBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "body: " + err.Error() + ` (want {"weight": w, "guarantee": {"cpus": n, ...}, "limit": {"cpus": n, ...}})`})
		return
	}
	req = m.mergeRole(path, req)
	weight := *req.Weight
	quota := state.Quota{Guarantee: protocol.Scalars(req.Guarantee), Limit: protocol.Scalars(req.Limit)}
	if !(weight > 0) {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: fmt.Sprintf("weight %v: want more than 0", weight)})
		return
	}
	if err := quota.Limit.Validate(); err != nil {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "limit: " + err.Error()})
		return
	}
	if err := quota.Guarantee.Validate(); err != nil {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "guarantee: " + err.Error()})
		return
	}
	ctx, cancel := l.requestContext(r.Context())
	defer cancel()
	cmd := state.SetRole{Path: path, Weight: weight, OfferConstraints: req.OfferConstraints, Preemption: req.Preemption}
	if !quota.Limit.IsEmpty() || !quota.Guarantee.IsEmpty() {
		cmd.Quota = &quota
	}
	role, err := l.setRole(ctx, cmd)
	switch {
	case err == nil && role != nil:
		out := api.RoleConfig{Path: role.Path, Weight: role.Weight, Guarantee: protocol.Resources{}, Limit: protocol.Resources{},
			OfferConstraints: role.OfferConstraints, Preemption: role.Preemption}
		if out.OfferConstraints == nil {
			out.OfferConstraints = []protocol.Constraint{}
		}
		if role.Quota != nil {
			out.Guarantee, out.Limit = role.Quota.Guarantee, role.Quota.Limit
		}
		out.Warnings = m.roleWarnings(out.Guarantee)
		for _, w := range out.Warnings {
			m.logger.Warn("role set", "path", path, "warning", w)
		}
		writeJSON(w, http.StatusOK, out)
	case errors.Is(err, protocol.ErrInvalidArgument), errors.Is(err, protocol.ErrInvalidResources), errors.Is(err, offers.ErrInvalid):
		writeJSON(w, http.StatusBadRequest, api.Error{Error: err.Error()})
	case err == nil:
		writeJSON(w, http.StatusInternalServerError, api.Error{Error: "no role in the result"})
	default:
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: err.Error()})
	}
}

// mergeRole fills what req leaves out from the role's current setting (or
// the defaults of a new role), so that a partial update keeps the rest.
func (m *Master) mergeRole(path string, req api.RoleRequest) api.RoleRequest {
	cur, ok := m.View().Role(path)
	if req.Weight == nil {
		w := 1.0
		if ok {
			w = cur.Weight
		}
		req.Weight = &w
	}
	if ok && cur.Quota != nil {
		if req.Guarantee == nil {
			req.Guarantee = cur.Quota.Guarantee.Scalars
		}
		if req.Limit == nil {
			req.Limit = cur.Quota.Limit.Scalars
		}
	}
	if req.OfferConstraints == nil && ok {
		req.OfferConstraints = cur.OfferConstraints
	}
	switch {
	case req.Preemption == api.PreemptionInherit:
		req.Preemption = ""
	case req.Preemption == "" && ok:
		req.Preemption = cur.Preemption
	}
	return req
}

// roleWarnings says which of a guarantee's resources exceed what the
// cluster's agents, but those gone for good, hold in all.
func (m *Master) roleWarnings(guarantee protocol.Resources) []string {
	if len(guarantee.Scalars) == 0 {
		return nil
	}
	var total protocol.Resources
	for _, ag := range m.View().Agents() {
		if ag.State != state.AgentGone {
			total = total.Add(ag.Resources)
		}
	}
	var out []string
	for _, name := range guarantee.Names() {
		if want, have := guarantee.Scalar(name), total.Scalar(name); want > have {
			out = append(out, fmt.Sprintf("guarantee %s %d exceeds the %d the cluster's agents hold: it cannot be met until agents join", name, want, have))
		}
	}
	return out
}
