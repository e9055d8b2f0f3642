package master

import (
	"encoding/json"
	"net/http"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// GET /v1/events streams the cluster events (protocol.ClusterEvent) as
// newline-delimited JSON, one object per line, until the client goes away.
// Any master serves it: the leader publishes the events on NATS and this
// master relays what it hears from the moment the request arrives.

// eventStreamBuffer bounds the events queued for one slow client; past it
// the stream is cut, and the client reconnects.
const eventStreamBuffer = 1024

func (m *Master) serveEvents(w http.ResponseWriter, r *http.Request, v viewer) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, api.Error{Error: "streaming unsupported"})
		return
	}
	ch := make(chan *nats.Msg, eventStreamBuffer)
	sub, err := m.nc.ChanSubscribe(m.cfg.subjects().Events(), ch)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: "subscribe to events: " + err.Error()})
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := m.nc.Flush(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: "subscribe to events: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	enc := json.NewEncoder(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case msg := <-ch:
			env, err := protocol.Decode(msg.Data)
			if err != nil || env.Type != protocol.MsgClusterEvent {
				continue
			}
			var ev protocol.ClusterEvent
			if protocol.DecodeBody(env, &ev) != nil || !m.seesEvent(v, ev) {
				continue
			}
			if enc.Encode(ev) != nil {
				return
			}
			flusher.Flush()
			if len(ch) == cap(ch) {
				return // too slow: cut rather than queue without bound
			}
		}
	}
}
