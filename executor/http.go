package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// The agent's HTTP server:
//
//	GET /healthz     200 {"status":"ok"}
//	GET /v1/state    the agent's ID, resources and tasks (StateResponse)
//	GET /metrics     Prometheus metrics (docs/metrics.md)
//	/v1/files/...    the sandboxes, with the files token (executor/files)
//
// /healthz, /v1/state and /metrics need no token: they show no command,
// environment or file content.

// StateResponse is the body of GET /v1/state.
type StateResponse struct {
	AgentID    protocol.AgentID    `json:"agent_id"`
	Hostname   string              `json:"hostname"`
	HTTPAddr   string              `json:"http_addr"`
	Registered bool                `json:"registered"`
	Resources  protocol.Resources  `json:"resources"`
	Used       protocol.Resources  `json:"used"`
	Attributes protocol.Attributes `json:"attributes,omitempty"`
	Tasks      []TaskSummary       `json:"tasks"`
}

// TaskSummary describes one task in StateResponse.
type TaskSummary struct {
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	TaskID      protocol.TaskID      `json:"task_id"`
	Name        string               `json:"name,omitempty"`
	GroupID     string               `json:"group_id,omitempty"`
	State       protocol.TaskState   `json:"state"`
	Reason      string               `json:"reason,omitempty"`
	Message     string               `json:"message,omitempty"`
	ExitCode    *int                 `json:"exit_code,omitempty"`
	// MemPeakMiB is, once the task ended, the most memory its processes
	// were seen to hold (protocol.TaskStatus.MemPeakMiB).
	MemPeakMiB int64              `json:"mem_peak_mib,omitempty"`
	Resources  protocol.Resources `json:"resources"`
	// Sandbox is the task's directory under the file server's root: its
	// files are at /v1/files/...?path=<sandbox>/<file>. Empty for a task
	// refused before it got one.
	Sandbox string `json:"sandbox,omitempty"`
	// PendingUpdates counts the status updates the master has not
	// acknowledged yet.
	PendingUpdates int `json:"pending_updates"`
}

// startHTTP listens on HTTPAddr and serves in the background.
func (a *Agent) startHTTP() error {
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("%w: the file server cannot listen on %s (%v): another agent may run there; choose another with --http",
			ErrConfig, a.cfg.HTTPAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/files/", a.files)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /v1/state", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, a.State())
	})
	mux.Handle("GET /metrics", a.metricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	a.mu.Lock()
	a.srv = srv
	a.listenAddr = ln.Addr().String()
	a.advertise = advertiseAddr(a.cfg.HTTPAdvertiseAddr, a.listenAddr, a.cfg.Hostname)
	a.mu.Unlock()
	a.srvWG.Add(1)
	go func() {
		defer a.srvWG.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server", "error", err)
		}
	}()
	a.log.Debug("http server listening", "addr", a.listenAddr)
	return nil
}

// stopHTTP stops the server, waiting briefly for requests in progress.
func (a *Agent) stopHTTP() {
	a.mu.Lock()
	srv := a.srv
	a.mu.Unlock()
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close() // long tails with follow, say
	}
	a.srvWG.Wait()
}

// advertiseAddr returns the configured address, or the listen address
// with an unspecified host replaced by hostname.
func advertiseAddr(configured, listen, hostname string) string {
	if configured != "" {
		return configured
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = hostname
	}
	return net.JoinHostPort(host, port)
}

// State returns what GET /v1/state serves: the agent and its tasks,
// ordered by framework and task ID, recently ended ones included.
func (a *Agent) State() StateResponse {
	a.mu.Lock()
	s := StateResponse{
		AgentID: a.ID(), Hostname: a.cfg.Hostname, HTTPAddr: a.advertise, Registered: a.registered,
		Resources: a.total.Clone(), Attributes: a.attrs, Tasks: []TaskSummary{},
	}
	a.mu.Unlock()
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	s.Used = a.tasks.usedLocked()
	for _, t := range a.tasks.live {
		ts := TaskSummary{
			FrameworkID: t.rec.FrameworkID, TaskID: t.rec.Info.TaskID, Name: t.rec.Info.Name,
			GroupID: t.rec.Info.GroupID, State: t.rec.State, Resources: t.rec.Info.Resources,
			PendingUpdates: len(t.rec.Queue),
		}
		if t.admitted && !t.rec.Unknown {
			ts.Sandbox = t.rec.Name
		}
		if t.rec.Latest != nil {
			st := t.rec.Latest.Status
			ts.Reason, ts.Message, ts.ExitCode, ts.MemPeakMiB = st.Reason, st.Message, st.ExitCode, st.MemPeakMiB
		}
		s.Tasks = append(s.Tasks, ts)
	}
	for k, e := range a.tasks.ended {
		ts := TaskSummary{
			FrameworkID: k.fw, TaskID: k.id, State: e.status.State, Reason: e.status.Reason,
			Message: e.status.Message, ExitCode: e.status.ExitCode, MemPeakMiB: e.status.MemPeakMiB,
		}
		if e.sandbox {
			ts.Sandbox = e.name
		}
		s.Tasks = append(s.Tasks, ts)
	}
	slices.SortFunc(s.Tasks, func(x, y TaskSummary) int {
		if c := strings.Compare(string(x.FrameworkID), string(y.FrameworkID)); c != 0 {
			return c
		}
		return strings.Compare(string(x.TaskID), string(y.TaskID))
	})
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
