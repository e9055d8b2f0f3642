package master

import (
	"context"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// A task's sandbox in the web UI, read by the leader from the task's
// agent with the framework's files token, as `allot tasks logs` reads it:
// the browser needs no token of the agents, and a principal reads only its
// own tasks' sandboxes (the task page's rule).
//
//	GET /ui/frameworks/{id}/tasks/{task}/stdout (or stderr)
//	                 the last lines of its output
//	GET /ui/frameworks/{id}/tasks/{task}/sandbox?path=DIR
//	                 a directory of its sandbox (the sandbox itself without path)
//	GET /ui/frameworks/{id}/tasks/{task}/file?path=FILE
//	                 the last lines of a file of its sandbox

// uiLogLines is how many of the last lines the page shows; uiLogBytes
// bounds what it reads of them.
const (
	uiLogLines = 200
	uiLogBytes = 256 << 10
)

// uiLogPage is what the log and sandbox pages render.
type uiLogPage struct {
	Task api.Task
	// File is the file's path in the sandbox, or the directory's ("" for
	// the sandbox); Up the directory above it.
	File, Up string
	Text     string
	Entries  []api.FileEntry
	// Err says why there is no text.
	Err string
}

func (m *Master) serveUILog(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	s := filterState(m.currentState(l), v)
	fw, id, what := protocol.FrameworkID(r.PathValue("id")), protocol.TaskID(r.PathValue("task")), r.PathValue("file")
	rel, ok := sandboxRel(what, r.URL.Query().Get("path"))
	if !ok {
		uiNotFound(w, "file", what)
		return
	}
	tasks := s.Tasks
	for _, f := range slices.Concat(s.Frameworks, s.CompletedFrameworks) {
		tasks = append(tasks, f.CompletedTasks...)
	}
	i := slices.IndexFunc(tasks, func(t api.Task) bool { return t.FrameworkID == fw && t.TaskID == id })
	if i < 0 {
		uiNotFound(w, "task", string(id))
		return
	}
	p := uiLogPage{Task: tasks[i], File: rel}
	if what == "sandbox" {
		if rel != "" {
			p.Up = path.Dir(rel)
			if p.Up == "." {
				p.Up = ""
			}
		}
		p.Entries, p.Err = m.readSandbox(r.Context(), s, p.Task, rel)
		renderUI(w, "sandbox", p)
		return
	}
	p.Up = path.Dir(rel)
	if p.Up == "." {
		p.Up = ""
	}
	p.Text, p.Err = m.taskOutput(r.Context(), s, p.Task, rel)
	renderUI(w, "log", p)
}

// sandboxRel is the path in the sandbox a page of kind what (stdout,
// stderr, sandbox or file) reads, given its ?path=: relative, clean and
// inside the sandbox (the agent confines it too); false for anything else.
func sandboxRel(what, q string) (string, bool) {
	switch what {
	case "stdout", "stderr":
		return what, q == ""
	case "sandbox", "file":
		rel := path.Clean("/" + q)[1:]
		if rel != strings.Trim(q, "/") || strings.Contains(q, "\\") || what == "file" && rel == "" {
			return "", false
		}
		return rel, true
	}
	return "", false
}

// taskOutput reads the last lines of a file of a task's sandbox from its
// agent, or says why it cannot.
func (m *Master) taskOutput(ctx context.Context, s api.State, t api.Task, rel string) (string, string) {
	var text string
	why := m.withSandbox(ctx, s, t, func(ctx context.Context, hc *http.Client, agent, token, sandbox string) error {
		resp, err := api.TailFile(ctx, hc, agent, token, sandbox+"/"+rel, uiLogLines, false)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, uiLogBytes))
		text = string(b)
		return err
	})
	return text, why
}

// readSandbox lists a directory of a task's sandbox from its agent, or
// says why it cannot.
func (m *Master) readSandbox(ctx context.Context, s api.State, t api.Task, rel string) ([]api.FileEntry, string) {
	var entries []api.FileEntry
	why := m.withSandbox(ctx, s, t, func(ctx context.Context, hc *http.Client, agent, token, sandbox string) error {
		var err error
		entries, err = api.ListDir(ctx, hc, agent, token, path.Join(sandbox, rel))
		return err
	})
	return entries, why
}

// withSandbox finds t's agent and sandbox and calls read with them and the
// framework's files token; it returns why it could not ("" if it could).
func (m *Master) withSandbox(ctx context.Context, s api.State, t api.Task,
	read func(ctx context.Context, hc *http.Client, agent, token, sandbox string) error) string {
	if m.cfg.FilesSecret == "" {
		return "the masters run without --files-secret, so they cannot read the agents' sandboxes"
	}
	i := slices.IndexFunc(s.Agents, func(a api.Agent) bool { return a.ID == t.AgentID })
	if i < 0 || s.Agents[i].HTTP == "" {
		return "the master does not know the file server of agent " + string(t.AgentID)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	hc := &http.Client{}
	agent := s.Agents[i].HTTP
	sandbox, err := api.TaskSandbox(ctx, hc, agent, t.FrameworkID, t.TaskID)
	if err != nil {
		return err.Error()
	}
	if err := read(ctx, hc, agent, m.cfg.filesToken(t.FrameworkID, time.Now()), sandbox); err != nil {
		return err.Error()
	}
	return ""
}
