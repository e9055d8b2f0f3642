package master

import (
	"errors"
	"net/http"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// GET /v1/frameworks/{id}/explain answers an operator's "why does this
// framework get no offers?" (api.Explanation): its demand, its filters and,
// per task shape, how many agents could take a task now and why the others
// cannot. The leader serves it from its allocator; followers redirect.

func (m *Master) serveExplain(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	id := protocol.FrameworkID(r.PathValue("id"))
	if !protocol.ValidID(string(id)) {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "not a framework id"})
		return
	}
	if !m.seesFramework(v, id) {
		// Another principal's framework is as unknown as a missing one.
		writeJSON(w, http.StatusNotFound, api.Error{Error: "unknown framework " + string(id)})
		return
	}
	out, err := m.explain(l, id)
	switch {
	case errors.Is(err, offers.ErrUnknownFramework):
		writeJSON(w, http.StatusNotFound, api.Error{Error: "unknown framework " + string(id)})
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, api.Error{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// explain is the leader's explanation of framework id's offers
// (offers.ErrUnknownFramework for one the allocator does not know).
func (m *Master) explain(l *leader, id protocol.FrameworkID) (api.Explanation, error) {
	l.mu.Lock()
	ex, err := l.alloc.Explain(id, time.Now())
	l.mu.Unlock()
	if err != nil {
		return api.Explanation{}, err
	}
	out := explanationJSON(ex)
	if f, ok := m.View().Framework(id); ok {
		out.Connected = f.Connected
		if !f.Connected {
			out.Reasons = append([]string{"the framework is disconnected: it gets no offers until its scheduler subscribes again"}, out.Reasons...)
		}
	}
	l.explainPreemption(&out, time.Now())
	return out, nil
}

func explanationJSON(ex offers.Explanation) api.Explanation {
	out := api.Explanation{
		FrameworkID: ex.Framework, Role: ex.Role, Suppressed: ex.Suppressed, Declared: ex.Declared,
		Allocation: ex.Allocation, Offered: ex.Offered, Offers: ex.Offers,
		DominantShare: finite(ex.DominantShare), Agents: ex.Agents,
		Filters: []api.Filter{}, Shapes: []api.Shape{}, Reasons: ex.Reasons(),
	}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	for _, f := range ex.Filters {
		var until *string
		if !f.Until.IsZero() {
			until = timeJSON(f.Until)
		}
		out.Filters = append(out.Filters, api.Filter{AgentID: f.Agent, Until: until})
	}
	for _, s := range ex.Shapes {
		sh := api.Shape{
			Kind: string(s.Kind), Resources: s.Resources, Ports: s.Ports,
			Constraints: s.Constraints, Offered: s.Offered, LimitedBy: s.LimitedBy, HeldBack: s.HeldBack,
			Agents: api.AgentFit(s.Agents),
		}
		if s.Pending != offers.Unlimited {
			p := s.Pending
			sh.Pending = &p
		}
		if sh.Constraints == nil {
			sh.Constraints = []protocol.Constraint{}
		}
		if sh.LimitedBy == nil {
			sh.LimitedBy = []string{}
		}
		out.Shapes = append(out.Shapes, sh)
	}
	return out
}
