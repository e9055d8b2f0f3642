package master

import (
	"context"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// GET /ui/frameworks/{id}/tasks/{task}/{file} (file: stdout or stderr)
// shows the last lines of a task's output, which the leader reads from the
// task's agent with the framework's files token, as `allot tasks logs`
// does: the browser needs no token of the agents, and a principal reads
// only its own tasks' output (the task page's rule).

// uiLogLines is how many of the last lines the page shows; uiLogBytes
// bounds what it reads of them.
const (
	uiLogLines = 200
	uiLogBytes = 256 << 10
)

// uiLogPage is what the log page renders.
type uiLogPage struct {
	Task api.Task
	File string
	Text string
	// Err says why there is no text.
	Err string
}

func (m *Master) serveUILog(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	s := filterState(m.currentState(l), v)
	fw, id, file := protocol.FrameworkID(r.PathValue("id")), protocol.TaskID(r.PathValue("task")), r.PathValue("file")
	if file != "stdout" && file != "stderr" {
		uiNotFound(w, "file", file)
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
	p := uiLogPage{Task: tasks[i], File: file}
	p.Text, p.Err = m.taskOutput(r.Context(), s, p.Task, file)
	renderUI(w, "log", p)
}

// taskOutput reads the last lines of a task's file from its agent, or says
// why it cannot.
func (m *Master) taskOutput(ctx context.Context, s api.State, t api.Task, file string) (string, string) {
	if m.cfg.FilesSecret == "" {
		return "", "the masters run without --files-secret, so they cannot read the agents' sandboxes"
	}
	i := slices.IndexFunc(s.Agents, func(a api.Agent) bool { return a.ID == t.AgentID })
	if i < 0 || s.Agents[i].HTTP == "" {
		return "", "the master does not know the file server of agent " + string(t.AgentID)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	hc := &http.Client{}
	agent := s.Agents[i].HTTP
	sandbox, err := api.TaskSandbox(ctx, hc, agent, t.FrameworkID, t.TaskID)
	if err != nil {
		return "", err.Error()
	}
	resp, err := api.TailFile(ctx, hc, agent, m.cfg.filesToken(t.FrameworkID, time.Now()), sandbox+"/"+file, uiLogLines, false)
	if err != nil {
		return "", err.Error()
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(io.LimitReader(resp.Body, uiLogBytes))
	if err != nil {
		return string(text), err.Error()
	}
	return string(text), ""
}
