package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Operator actions on tasks, frameworks and drains with a deadline. Each
// needs the operator token when the masters have one; the leader answers
// a refusal with a typed error (Error.Code), which errors.Is matches
// against protocol's sentinels: protocol.ErrUnknownFramework and
// protocol.ErrUnknownTask (404), protocol.ErrNotPreemptible (409),
// protocol.ErrInvalidArgument (400 for a bad request, 409 for a task that
// already ended).

// KillRequest is the optional body of POST
// /v1/frameworks/{id}/tasks/{task}/kill.
type KillRequest struct {
	// Force kills a task its framework launched non-preemptible.
	Force bool `json:"force,omitempty"`
	// GracePeriod is how long the task has between SIGTERM and SIGKILL,
	// a Go duration ("10s"); empty: the task's own kill grace period.
	GracePeriod string `json:"grace_period,omitempty"`
}

// TaskKill answers an operator's kill: the kill was sent to the task's
// agent, whose KILLED status will carry Reason.
type TaskKill struct {
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	TaskID      protocol.TaskID      `json:"task_id"`
	AgentID     protocol.AgentID     `json:"agent_id"`
	Reason      string               `json:"reason"`
}

// FrameworkTeardown answers POST /v1/frameworks/{id}/teardown: the
// framework is removed ("removed") and its agents told to shut its tasks
// down.
type FrameworkTeardown struct {
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	State       string               `json:"state"`
}

// DrainRequest is the optional body of POST /v1/agents/{id}/drain.
type DrainRequest struct {
	// Deadline, a Go duration from now ("10m"), is when the tasks still on
	// the agent are killed (reason agent_drained); their frameworks are
	// warned at once. Empty: no deadline, the tasks run on.
	Deadline string `json:"deadline,omitempty"`
}

// KillTask kills task of framework fw for the operator (reason
// killed_by_operator). force kills a non-preemptible task; grace, when
// not 0, replaces the task's kill grace period.
func (c *Client) KillTask(ctx context.Context, fw protocol.FrameworkID, task protocol.TaskID, force bool, grace time.Duration) (TaskKill, error) {
	if grace < 0 {
		return TaskKill{}, fmt.Errorf("%w: grace period %s is negative", ErrBadRequest, grace)
	}
	req := KillRequest{Force: force}
	if grace > 0 {
		req.GracePeriod = grace.String()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return TaskKill{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	var out TaskKill
	path := "/v1/frameworks/" + url.PathEscape(string(fw)) + "/tasks/" + url.PathEscape(string(task)) + "/kill"
	return out, c.call(ctx, http.MethodPost, path, body, &out)
}

// TeardownFramework removes framework fw: its tasks are shut down and its
// offers rescinded, as its own teardown call does.
func (c *Client) TeardownFramework(ctx context.Context, fw protocol.FrameworkID) (FrameworkTeardown, error) {
	var out FrameworkTeardown
	return out, c.call(ctx, http.MethodPost, "/v1/frameworks/"+url.PathEscape(string(fw))+"/teardown", nil, &out)
}

// DrainAgentWithin drains agent id, as DrainAgent does, and has the leader
// kill the tasks still on it once deadline has passed (0: never). Their
// frameworks are warned now.
func (c *Client) DrainAgentWithin(ctx context.Context, id protocol.AgentID, deadline time.Duration) (AgentState, error) {
	if deadline < 0 {
		return AgentState{}, fmt.Errorf("%w: drain deadline %s is negative", ErrBadRequest, deadline)
	}
	var req DrainRequest
	if deadline > 0 {
		req.Deadline = deadline.String()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return AgentState{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	var out AgentState
	return out, c.call(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(string(id))+"/drain", body, &out)
}
