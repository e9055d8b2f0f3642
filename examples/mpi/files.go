package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// maxFile bounds what the framework reads of a rank's output.
const maxFile = 1 << 20

// sandboxFile reads a file of a rank's sandbox from its agent's file
// server, with the framework's files token.
func (j *job) sandboxFile(ctx context.Context, t protocol.TaskInfo, name string) (string, error) {
	o, ok := j.sched.agent(t.AgentID)
	if !ok || o.Addresses.HTTP == "" {
		return "", fmt.Errorf("agent %s advertises no file server", t.AgentID)
	}
	path := string(j.d.ID()) + "_" + string(t.TaskID) + "/" + name
	u := "http://" + o.Addresses.HTTP + "/v1/files/download?" + url.Values{"path": {path}}.Encode()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	if token := j.d.FilesToken(); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFile))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("read %s from %s: %s: %s", path, o.Addresses.HTTP, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}
