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
	views := l.coflows.views()
	_, completed := l.coflows.stats()
	out := api.Coflows{Coflows: make([]api.Coflow, 0, len(views)), Completed: completed}
	for _, v := range views {
		out.Coflows = append(out.Coflows, api.Coflow{
			FrameworkID: string(v.key.fw), CoflowID: v.key.id, Phase: v.phase, Queue: v.queue,
			Flows: v.flows, FlowsLeft: v.left, BytesSent: v.bytesSent, EstimatedBytes: v.estimatedSize,
			RegisteredAt: v.registered.UnixNano(),
		})
	}
	return out
}
