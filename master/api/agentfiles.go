package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/allot-project/allot/protocol"
)

// A task's output lives in its sandbox on the agent that ran it, read on
// the agent's file server with the framework's files token (GET
// /v1/frameworks/{id}/files-token): `allot tasks logs` reads it so, and
// the web UI through the leader.

// TaskSandbox asks the file server at agentHTTP (host:port) for task's
// sandbox directory.
func TaskSandbox(ctx context.Context, hc *http.Client, agentHTTP string, fw protocol.FrameworkID, task protocol.TaskID) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+agentHTTP+"/v1/state", nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("agent %s: %w", agentHTTP, err)
	}
	defer resp.Body.Close()
	var st struct {
		Tasks []struct {
			FrameworkID protocol.FrameworkID `json:"framework_id"`
			TaskID      protocol.TaskID      `json:"task_id"`
			Sandbox     string               `json:"sandbox"`
		} `json:"tasks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return "", fmt.Errorf("agent %s state: %w", agentHTTP, err)
	}
	for _, t := range st.Tasks {
		if t.FrameworkID == fw && t.TaskID == task && t.Sandbox != "" {
			return t.Sandbox, nil
		}
	}
	return "", fmt.Errorf("agent %s keeps no sandbox of task %s (it may have been cleaned up)", agentHTTP, task)
}

// TailFile asks the file server at agentHTTP for the last lines of path
// (with follow, and what is appended after them, until ctx ends), with a
// files token. The caller closes the body of the answer, which is 200.
func TailFile(ctx context.Context, hc *http.Client, agentHTTP, token, path string, lines int, follow bool) (*http.Response, error) {
	q := url.Values{"path": {path}, "lines": {strconv.Itoa(lines)}}
	if follow {
		q.Set("follow", "1")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+agentHTTP+"/v1/files/tail?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", agentHTTP, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("agent %s: %s: %s", agentHTTP, resp.Status, body)
	}
	return resp, nil
}

// FileEntry is one item of a sandbox directory as the agent's file server
// lists it.
type FileEntry struct {
	Name  string    `json:"name"`
	Size  int64     `json:"size"`
	Mode  string    `json:"mode"`
	MTime time.Time `json:"mtime"`
	Dir   bool      `json:"dir"`
}

// ListDir asks the file server at agentHTTP for the entries of the
// directory path, with a files token.
func ListDir(ctx context.Context, hc *http.Client, agentHTTP, token, path string) ([]FileEntry, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+agentHTTP+"/v1/files/list?"+url.Values{"path": {path}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", agentHTTP, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("agent %s: %s: %s", agentHTTP, resp.Status, body)
	}
	var out []FileEntry
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("agent %s listing: %w", agentHTTP, err)
	}
	return out, nil
}
