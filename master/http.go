package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// The operator HTTP API's endpoints are the table in http_routes.go.
//
// Followers learn the leader's HTTP address from the announcements the
// leader publishes on the leader subject; an announcement counts only while
// its sender is the Raft leader this master knows, so a stale one never
// redirects to a former leader.

const (
	// httpShutdownTimeout bounds the graceful shutdown of the HTTP server;
	// connections still open after it are closed.
	httpShutdownTimeout = 5 * time.Second
	// httpReadHeaderTimeout bounds reading a request's headers.
	httpReadHeaderTimeout = 10 * time.Second
	// httpIdleTimeout closes keep-alive connections idle this long.
	httpIdleTimeout = 2 * time.Minute
)

// operatorAPI is the master's HTTP server and what it heard from leader
// announcements. mu guards every field; it never nests with other locks.
type operatorAPI struct {
	mu     sync.Mutex
	srv    *http.Server
	addr   string        // the listener's address
	served chan struct{} // closed when Serve returns

	announcement protocol.LeaderAnnouncement // latest received
	announced    bool
}

// HTTPAddr returns the address the operator HTTP API listens on (with the
// real port when Config.HTTPAddr used port 0), or "" when it is disabled or
// not started yet. It is set before Ready is closed.
func (m *Master) HTTPAddr() string {
	m.ops.mu.Lock()
	defer m.ops.mu.Unlock()
	return m.ops.addr
}

// httpAdvertiseAddr is the HTTP address the leader announces: the
// listener's, with an unspecified host (0.0.0.0, ::) replaced by the host
// of this master's Raft address, which peers can reach.
func (m *Master) httpAdvertiseAddr() string {
	addr := m.HTTPAddr()
	host, port, err := net.SplitHostPort(addr)
	if err != nil || m.cfg.Raft.InMemory || m.node == nil {
		return addr
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		return addr
	}
	if raftHost, _, err := net.SplitHostPort(m.node.Addr()); err == nil && raftHost != "" {
		return net.JoinHostPort(raftHost, port)
	}
	return addr
}

// watchLeader subscribes to leader announcements and remembers the one
// with the highest term.
// The subscription ends when the NATS connection closes.
func (m *Master) watchLeader() error {
	subject := m.cfg.subjects().Leader()
	logger := m.logger.Named("http")
	_, err := m.nc.Subscribe(subject, func(msg *nats.Msg) {
		env, err := protocol.Decode(msg.Data)
		if err != nil || env.Type != protocol.MsgLeaderAnnouncement {
			logger.Debug("ignoring a message on the leader subject", "error", err)
			return
		}
		var a protocol.LeaderAnnouncement
		if err := protocol.DecodeBody(env, &a); err != nil {
			logger.Debug("ignoring a leader announcement", "error", err)
			return
		}
		m.ops.mu.Lock()
		// Keep the announcement with the highest term (ties: the latest).
		if !m.ops.announced || a.Term >= m.ops.announcement.Term {
			m.ops.announcement, m.ops.announced = a, true
		}
		m.ops.mu.Unlock()
	})
	if err != nil {
		return fmt.Errorf("subscribe to leader announcements: %w", err)
	}
	if err := m.nc.Flush(); err != nil {
		return fmt.Errorf("subscribe to leader announcements: %w", err)
	}
	return nil
}

// startHTTP starts the operator API on Config.HTTPAddr; an empty address
// disables it.
func (m *Master) startHTTP() error {
	if m.cfg.HTTPAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("http listen: %w", err)
	}
	logger := m.logger.Named("http")
	// Requests' contexts end when the server shuts down, so streams
	// (GET /v1/events) end with it instead of holding the shutdown up.
	base, stopStreams := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           m.httpHandler(),
		ReadHeaderTimeout: httpReadHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		ErrorLog:          logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	srv.RegisterOnShutdown(stopStreams)
	served := make(chan struct{})
	m.ops.mu.Lock()
	m.ops.srv, m.ops.addr, m.ops.served = srv, ln.Addr().String(), served
	m.ops.mu.Unlock()
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server stopped", "error", err)
		}
	}()
	logger.Info("http api listening", "addr", ln.Addr().String())
	return nil
}

// stopHTTP shuts the operator API down gracefully, closing connections
// still open after httpShutdownTimeout, and waits for its server to exit.
func (m *Master) stopHTTP() {
	m.ops.mu.Lock()
	srv, served := m.ops.srv, m.ops.served
	m.ops.srv = nil
	m.ops.mu.Unlock()
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		m.logger.Warn("http shutdown", "error", err)
		_ = srv.Close()
	}
	<-served
}

func (m *Master) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case m.nc == nil || !m.nc.IsConnected():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("nats not connected\n"))
	case m.node == nil || !m.node.Running():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("raft not running\n"))
	default:
		_, _ = w.Write([]byte("ok\n"))
	}
}

// serveReadyz answers whether this master can serve current state: alive
// (healthz), and its Raft node part of a quorum and caught up.
func (m *Master) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	reason := ""
	switch {
	case m.nc == nil || !m.nc.IsConnected():
		reason = "nats not connected"
	case m.node == nil:
		reason = "raft not running"
	default:
		reason = m.node.Ready()
	}
	if reason != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(reason + "\n"))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

func (m *Master) serveLeader(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, m.leaderInfo())
}

// leaderInfo says who leads, as this master knows it.
func (m *Master) leaderInfo() api.Leader {
	info := api.Leader{SelfID: m.ID(), IsLeader: m.IsLeader(), RaftIndex: m.View().Index()}
	info.LeaderID, info.LeaderRaftAddr = m.node.Leader()
	switch {
	case info.IsLeader:
		info.LeaderID, info.LeaderRaftAddr = m.ID(), m.RaftAddr()
		info.LeaderHTTPAddr = m.httpAdvertiseAddr()
	case info.LeaderID != "" && info.LeaderID != m.ID():
		m.ops.mu.Lock()
		if m.ops.announced && m.ops.announcement.ID == info.LeaderID {
			info.LeaderHTTPAddr = m.ops.announcement.HTTPAddr
		}
		m.ops.mu.Unlock()
	}
	return info
}

// leaderOnly serves h on the leader. A follower redirects the request to
// the leader's HTTP address (same path and query) or, when it does not
// know it, answers 503.
func (m *Master) leaderOnly(h func(http.ResponseWriter, *http.Request, *leader)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		l := m.leader
		m.mu.Unlock()
		if l != nil {
			h(w, r, l)
			return
		}
		info := m.leaderInfo()
		switch {
		case info.LeaderID == m.ID():
			writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: "this master was elected and is not serving yet", LeaderID: info.LeaderID})
		case info.LeaderHTTPAddr != "":
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, "http://"+info.LeaderHTTPAddr+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		case info.LeaderID == "":
			writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: "no leader is known"})
		default:
			writeJSON(w, http.StatusServiceUnavailable, api.Error{Error: "the leader's http address is not known", LeaderID: info.LeaderID})
		}
	}
}

// serveState renders the replicated state and the leader's allocator state,
// as far as the viewer may see it.
func (m *Master) serveState(w http.ResponseWriter, _ *http.Request, l *leader, v viewer) {
	writeJSON(w, http.StatusOK, filterState(m.currentState(l), v))
}

// currentState is the replicated state with the leader's allocator state.
func (m *Master) currentState(l *leader) api.State {
	v := m.View()
	l.mu.Lock()
	shares := l.alloc.Shares()
	outstanding := l.alloc.Outstanding()
	l.mu.Unlock()
	st := buildState(v, shares, outstanding)
	st.LeaderID, st.LeaderHTTP = m.ID(), m.httpAdvertiseAddr()
	return st
}

// writeJSON encodes body before writing anything, so an encoding failure
// is a clean 500 rather than a truncated 200.
func writeJSON(w http.ResponseWriter, code int, body any) {
	data, err := json.Marshal(body)
	if err != nil {
		code = http.StatusInternalServerError
		data, _ = json.Marshal(api.Error{Error: "encode response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
