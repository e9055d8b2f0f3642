package master

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
)

// Backup and restore of the replicated state, as Nomad's `operator
// snapshot` (operator token; leader only, followers redirect):
//
//	GET /v1/operator/snapshot  the state as the masters snapshot it.
//	PUT /v1/operator/snapshot  replace the cluster's state with such a snapshot.
//
// A restore is checked whole before Raft sees it, installed as a new Raft
// snapshot on every master, and the leader rebuilds its allocator from it.
// Agents and frameworks then reconcile with it as after a failover: tasks
// and agents the snapshot does not know are unknown to the masters.

// maxSnapshotBody bounds a snapshot to restore.
const maxSnapshotBody = 1 << 30

func (m *Master) serveSnapshotSave(w http.ResponseWriter, _ *http.Request, _ *leader) {
	v := m.View()
	var buf bytes.Buffer
	if _, err := v.WriteTo(&buf); err != nil {
		writeJSON(w, http.StatusInternalServerError, api.Error{Error: "snapshot: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="allot-%d.snap"`, v.Index()))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
	m.logger.Info("state snapshot saved by the operator", "index", v.Index(), "bytes", buf.Len())
}

func (m *Master) serveSnapshotRestore(w http.ResponseWriter, r *http.Request, _ *leader) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxSnapshotBody+1))
	switch {
	case err != nil:
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "read the snapshot: " + err.Error()})
		return
	case len(data) > maxSnapshotBody:
		writeJSON(w, http.StatusRequestEntityTooLarge, api.Error{Error: fmt.Sprintf("snapshot larger than %d bytes", maxSnapshotBody)})
		return
	}
	restored, err := state.Restore(bytes.NewReader(data))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "not a snapshot of the state: " + err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), m.cfg.RequestTimeout)
	defer cancel()
	if err := m.node.Restore(ctx, data); err != nil {
		m.logger.Error("restore the state", "error", err)
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: err.Error()})
		return
	}
	m.logger.Warn("state restored from a snapshot by the operator", "snapshot_index", restored.Index())
	m.rebuildLeader()
	writeJSON(w, http.StatusOK, api.Restored{SnapshotIndex: restored.Index()})
}
