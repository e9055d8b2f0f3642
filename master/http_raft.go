package master

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/raftstore"
)

// The masters' Raft membership, for replacing a master (as Nomad's
// `operator raft` does):
//
//	GET    /v1/operator/raft/peers       the members as this master knows them (any master).
//	POST   /v1/operator/raft/peers       add a master: {"id": "m4", "address": "10.0.0.4:7000"};
//	                                     it must already run, started without --bootstrap.
//	DELETE /v1/operator/raft/peers/{id}  remove a master, e.g. one that is gone for good.
//
// Changes need the operator token and the leader (followers redirect).
// Each answers the members after the change.

// maxRaftPeerBody bounds the body of a membership request.
const maxRaftPeerBody = 4 << 10

func (m *Master) serveRaftPeers(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), m.cfg.RequestTimeout)
	defer cancel()
	m.writeRaftPeers(ctx, w)
}

func (m *Master) writeRaftPeers(ctx context.Context, w http.ResponseWriter) {
	peers, err := m.raftPeers(ctx)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, api.RaftPeers{Peers: peers})
}

// raftPeers is the masters' Raft configuration by node ID, the leader
// marked.
func (m *Master) raftPeers(ctx context.Context) ([]api.RaftPeer, error) {
	peers, err := m.node.Members(ctx)
	if err != nil {
		return nil, err
	}
	leader, _ := m.node.Leader()
	out := []api.RaftPeer{}
	for _, p := range peers {
		out = append(out, api.RaftPeer{ID: p.ID, Address: p.Address, Leader: p.ID == leader})
	}
	slices.SortFunc(out, func(a, b api.RaftPeer) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func (m *Master) serveAddRaftPeer(w http.ResponseWriter, r *http.Request, _ *leader) {
	var req api.RaftPeerRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRaftPeerBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.ID == "" || req.Address == "" {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: `body: want {"id": "m4", "address": "host:port"}`})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), m.cfg.RequestTimeout)
	defer cancel()
	if err := m.node.Join(ctx, req.ID, req.Address); err != nil {
		m.logger.Warn("add raft peer", "peer_id", req.ID, "error", err)
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: err.Error()})
		return
	}
	m.logger.Info("raft peer added by the operator", "peer_id", req.ID, "peer_addr", req.Address)
	m.writeRaftPeers(ctx, w)
}

func (m *Master) serveRemoveRaftPeer(w http.ResponseWriter, r *http.Request, _ *leader) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), m.cfg.RequestTimeout)
	defer cancel()
	peers, err := m.node.Members(ctx)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: err.Error()})
		return
	}
	if !slices.ContainsFunc(peers, func(p raftstore.Peer) bool { return p.ID == id }) {
		writeJSON(w, http.StatusNotFound, api.Error{Error: "no raft peer " + id})
		return
	}
	if err := m.node.Remove(ctx, id); err != nil {
		m.logger.Warn("remove raft peer", "peer_id", id, "error", err)
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: err.Error()})
		return
	}
	m.logger.Info("raft peer removed by the operator", "peer_id", id)
	m.writeRaftPeers(ctx, w)
}
