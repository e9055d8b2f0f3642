//go:build linux

package executor

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// sandboxOf returns a task's sandbox name from the agent's /v1/state.
func sandboxOf(t *testing.T, a *agentProc, fw protocol.FrameworkID, id string) string {
	t.Helper()
	var st StateResponse
	getJSON(t, "http://"+a.HTTPAddr()+"/v1/state", "", &st)
	for _, ts := range st.Tasks {
		if ts.FrameworkID == fw && ts.TaskID == protocol.TaskID(id) {
			return ts.Sandbox
		}
	}
	t.Fatalf("task %s not in the agent's state", id)
	return ""
}

// readFile downloads a sandbox file through the agent's file server.
func readFile(t *testing.T, a *agentProc, path, token string) (int, string) {
	t.Helper()
	u := "http://" + a.HTTPAddr() + "/v1/files/download?path=" + url.QueryEscape(path)
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func getJSON(t *testing.T, u, token string, into any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// touch creates a file in a task's sandbox.
func touch(t *testing.T, a *Agent, sandbox, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(a.SandboxRoot(), sandbox, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// publish sends a command to the agent as the leader would.
func publish(t *testing.T, nc *nats.Conn, c *testcluster.Cluster, id protocol.AgentID, typ protocol.MsgType, body any) {
	t.Helper()
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	publishRaw(t, nc, c, id, data)
}

func publishRaw(t *testing.T, nc *nats.Conn, c *testcluster.Cluster, id protocol.AgentID, data []byte) {
	t.Helper()
	subject, err := c.Subjects().AgentCmd("", id)
	if err != nil {
		t.Fatal(err)
	}
	// Stamped with the serving leader's term, as the leader's commands are:
	// the agent drops commands of older terms.
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(protocol.TermHeader, strconv.FormatUint(c.WaitForLeader().Raft().Term(), 10))
	if err := nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}
