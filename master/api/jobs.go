package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Changing a principal's jobs over HTTP, as `allot jobs` does through the
// store (docs/jobs.md). The principal changes its own jobs (basic
// authentication), the operator anyone's; a principal is named as in
// subjects ("anonymous" for a cluster that authenticates nobody). Bodies
// are JSON: a job file travels as a string. Refusals carry a typed error
// (Error.Code): a job file the parser or the agents refuse is
// protocol.ErrInvalidArgument (400) with the file's line and column.

// JobSubmit is the body of POST /v1/jobs/{principal}.
type JobSubmit struct {
	// File names the file in error messages ("job.hcl" when empty).
	File string `json:"file,omitempty"`
	// Source is the job file.
	Source string `json:"source"`
	// Check only checks the file and answers what it would do.
	Check bool `json:"check,omitempty"`
}

// JobRevert is the body of POST /v1/jobs/{principal}/{name}/revert.
type JobRevert struct {
	Version int `json:"version"`
}

// JobChange answers a submission, a check, a revert or a stop: the
// version made (or that would be), and what it starts, stops and
// replaces of the version that ran, group by group.
type JobChange struct {
	Principal string `json:"principal"`
	Name      string `json:"name"`
	Version   int    `json:"version"`
	// Unchanged: the file is the version that runs; nothing was made.
	Unchanged bool `json:"unchanged,omitempty"`
	// Checked: nothing was submitted (JobSubmit.Check).
	Checked bool             `json:"checked,omitempty"`
	Stopped bool             `json:"stopped,omitempty"`
	Groups  []JobGroupChange `json:"groups"`
}

// JobGroupChange is what a version does to one group's instances.
type JobGroupChange struct {
	Group   string `json:"group"`
	Start   int    `json:"start,omitempty"`
	Stop    int    `json:"stop,omitempty"`
	Replace int    `json:"replace,omitempty"`
	Keep    int    `json:"keep,omitempty"`
}

// SubmitJob submits a job file as the next version of its job, or only
// checks it (req.Check).
func (c *Client) SubmitJob(ctx context.Context, principal string, req JobSubmit) (JobChange, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return JobChange{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	var out JobChange
	return out, c.call(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(principal), body, &out)
}

// StopJob marks a job stopped: the runner kills its instances.
func (c *Client) StopJob(ctx context.Context, principal, name string) (JobChange, error) {
	var out JobChange
	return out, c.call(ctx, http.MethodPost, jobPath(principal, name)+"/stop", []byte("{}"), &out)
}

// RevertJob makes a kept version's file the job's next version.
func (c *Client) RevertJob(ctx context.Context, principal, name string, version int) (JobChange, error) {
	body, err := json.Marshal(JobRevert{Version: version})
	if err != nil {
		return JobChange{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	var out JobChange
	return out, c.call(ctx, http.MethodPost, jobPath(principal, name)+"/revert", body, &out)
}

func jobPath(principal, name string) string {
	return "/v1/jobs/" + url.PathEscape(principal) + "/" + url.PathEscape(name)
}
