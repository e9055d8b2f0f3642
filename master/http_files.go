package master

import (
	"net/http"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// GET /v1/frameworks/{id}/files-token hands an operator the framework's
// files token (protocol.FrameworkFilesToken), which reads the framework's
// sandboxes on every agent's file server, so that `allot tasks logs` can
// show a task's output. It needs the operator token and the masters'
// --files-secret; any master answers.

func (m *Master) serveFilesToken(w http.ResponseWriter, r *http.Request) {
	id := protocol.FrameworkID(r.PathValue("id"))
	if !protocol.ValidID(string(id)) {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "not a framework id"})
		return
	}
	if m.cfg.FilesSecret == "" {
		writeJSON(w, http.StatusConflict, api.Error{Error: "the masters have no --files-secret: frameworks' sandboxes are readable only with each agent's own token"})
		return
	}
	writeJSON(w, http.StatusOK, api.FilesToken{FrameworkID: id, Token: m.cfg.filesToken(id, time.Now())})
}
