package master

import (
	"net/http"

	"github.com/allot-project/allot/master/api"
)

// GET /v1/coflows lists the coflows the leader schedules (api.Coflows).
// Coflow state lives in the leader's memory; followers redirect.
func (m *Master) serveCoflows(w http.ResponseWriter, _ *http.Request, l *leader, v viewer) {
	writeJSON(w, http.StatusOK, m.filterCoflows(l.coflowsJSON(), v))
}

// Coflows returns the coflows this master schedules, and false when it
// does not lead.
func (m *Master) Coflows() (api.Coflows, bool) {
	m.mu.Lock()
	l := m.leader
	m.mu.Unlock()
	if l == nil {
		return api.Coflows{}, false
	}
	return l.coflowsJSON(), true
}

func (l *leader) coflowsJSON() api.Coflows {
	views := l.coflows.Views()
	_, completed := l.coflows.Stats()
	out := api.Coflows{Coflows: make([]api.Coflow, 0, len(views)), Completed: completed}
	for _, v := range views {
		out.Coflows = append(out.Coflows, api.Coflow{
			FrameworkID: string(v.FrameworkID), CoflowID: v.CoflowID, Phase: v.Phase, Queue: v.Queue,
			Flows: v.Flows, FlowsLeft: v.Left, BytesSent: v.BytesSent, EstimatedBytes: v.EstimatedSize,
			RegisteredAt: v.Registered.UnixNano(),
		})
	}
	return out
}
