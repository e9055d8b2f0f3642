package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Client calls the operator API of a set of masters. Each call tries the
// masters in turn until one answers; a follower redirects a leader-only
// call to the leader, and the client follows only to one of the masters it
// was given, so that its credentials go nowhere else (a redirect elsewhere
// fails with ErrUnknownMaster, naming the address to add).
type Client struct {
	bases []string // "http://host:port", no trailing slash
	token string
	// principal and secret, when set, authenticate reads as a framework
	// principal (basic authentication), where no operator token is given.
	principal, secret string
	hc                *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends the operator token (master --operator-token) as a bearer
// token; operator actions need it when the masters have one.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithPrincipal reads as a framework principal: on a cluster shared by
// tenants (masters with --credentials), the state, events and
// explanations it gets show that principal's frameworks and tasks only.
func WithPrincipal(principal, secret string) Option {
	return func(c *Client) { c.principal, c.secret = principal, secret }
}

// WithHTTPClient uses hc instead of a default client; its redirect policy
// is replaced.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// maxRedirects bounds how many leader redirects one call follows.
const maxRedirects = 3

// retryPause and maxRetryPause bound the pause between two rounds over
// the masters while none could serve a call.
const (
	retryPause    = 100 * time.Millisecond
	maxRetryPause = time.Second
	// refusedRounds is how many rounds in a row every master refuses
	// the connection before a call gives up on them (about 0.7 s).
	refusedRounds = 3
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// NewClient returns a client of the masters at addrs, each "host:port" or
// an http(s) URL.
func NewClient(addrs []string, opts ...Option) (*Client, error) {
	c := &Client{}
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if !strings.Contains(a, "://") {
			a = "http://" + a
		}
		u, err := url.Parse(a)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("%w: master address %q: want host:port or an http URL", ErrBadRequest, a)
		}
		c.bases = append(c.bases, strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/"))
	}
	if len(c.bases) == 0 {
		return nil, fmt.Errorf("%w: no master address", ErrBadRequest)
	}
	for _, o := range opts {
		o(c)
	}
	hc := http.Client{}
	if c.hc != nil {
		hc = *c.hc
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	return c, nil
}

// Leader asks the first master that answers who leads.
func (c *Client) Leader(ctx context.Context) (Leader, error) {
	var out Leader
	return out, c.call(ctx, http.MethodGet, "/v1/leader", nil, &out)
}

// State returns the cluster's state from the leader.
func (c *Client) State(ctx context.Context) (State, error) {
	var out State
	return out, c.call(ctx, http.MethodGet, "/v1/state", nil, &out)
}

// Explain says why framework id is or is not offered resources.
func (c *Client) Explain(ctx context.Context, id protocol.FrameworkID) (Explanation, error) {
	var out Explanation
	return out, c.call(ctx, http.MethodGet, "/v1/frameworks/"+url.PathEscape(string(id))+"/explain", nil, &out)
}

// Coflows lists the coflows the leader schedules.
func (c *Client) Coflows(ctx context.Context) (Coflows, error) {
	var out Coflows
	return out, c.call(ctx, http.MethodGet, "/v1/coflows", nil, &out)
}

// FilesToken returns the token that reads framework id's sandboxes on the
// agents' file servers (the operator token needed).
func (c *Client) FilesToken(ctx context.Context, id protocol.FrameworkID) (FilesToken, error) {
	var out FilesToken
	return out, c.call(ctx, http.MethodGet, "/v1/frameworks/"+url.PathEscape(string(id))+"/files-token", nil, &out)
}

// DrainAgent stops offering agent id; its tasks keep running.
func (c *Client) DrainAgent(ctx context.Context, id protocol.AgentID) (AgentState, error) {
	return c.agentAction(ctx, id, "drain")
}

// ActivateAgent offers a drained agent again.
func (c *Client) ActivateAgent(ctx context.Context, id protocol.AgentID) (AgentState, error) {
	return c.agentAction(ctx, id, "activate")
}

// MarkAgentGone takes agent id out of the cluster for good: its tasks are
// LOST (agent_gone) and it may never reregister.
func (c *Client) MarkAgentGone(ctx context.Context, id protocol.AgentID) (AgentState, error) {
	return c.agentAction(ctx, id, "gone")
}

// agentAction posts an operator action on agent id.
func (c *Client) agentAction(ctx context.Context, id protocol.AgentID, action string) (AgentState, error) {
	var out AgentState
	return out, c.call(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(string(id))+"/"+action, nil, &out)
}

// SetRole sets the weight, quota and offer constraints of the role at path.
func (c *Client) SetRole(ctx context.Context, path string, req RoleRequest) (RoleConfig, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return RoleConfig{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	var out RoleConfig
	return out, c.call(ctx, http.MethodPut, "/v1/roles/"+path, body, &out)
}

// RaftPeers lists the masters' Raft members as the first master that
// answers knows them.
func (c *Client) RaftPeers(ctx context.Context) (RaftPeers, error) {
	var out RaftPeers
	return out, c.call(ctx, http.MethodGet, "/v1/operator/raft/peers", nil, &out)
}

// AddRaftPeer adds the master with node ID id, already running without
// bootstrap, at its advertised Raft address.
func (c *Client) AddRaftPeer(ctx context.Context, id, addr string) (RaftPeers, error) {
	body, err := json.Marshal(RaftPeerRequest{ID: id, Address: addr})
	if err != nil {
		return RaftPeers{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	var out RaftPeers
	return out, c.call(ctx, http.MethodPost, "/v1/operator/raft/peers", body, &out)
}

// RemoveRaftPeer removes the master with node ID id from the Raft
// configuration.
func (c *Client) RemoveRaftPeer(ctx context.Context, id string) (RaftPeers, error) {
	var out RaftPeers
	return out, c.call(ctx, http.MethodDelete, "/v1/operator/raft/peers/"+url.PathEscape(id), nil, &out)
}

// SaveSnapshot writes a snapshot of the replicated state (a backup) to w
// and returns its size.
func (c *Client) SaveSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	resp, err := c.do(ctx, http.MethodGet, "/v1/operator/snapshot", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("read the snapshot: %w", err)
	}
	return n, nil
}

// RestoreSnapshot replaces the cluster's replicated state with a snapshot
// SaveSnapshot wrote.
func (c *Client) RestoreSnapshot(ctx context.Context, snapshot []byte) (Restored, error) {
	if len(snapshot) == 0 {
		return Restored{}, fmt.Errorf("%w: empty snapshot", ErrBadRequest)
	}
	var out Restored
	return out, c.call(ctx, http.MethodPut, "/v1/operator/snapshot", snapshot, &out)
}

// Events streams the cluster events to fn until ctx ends, fn returns an
// error (returned as is), or the master closes the stream (io.EOF).
func (c *Client) Events(ctx context.Context, fn func(protocol.ClusterEvent) error) error {
	resp, err := c.do(ctx, http.MethodGet, "/v1/events", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev protocol.ClusterEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("event stream: %w", err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	return io.EOF
}

// call sends one request and decodes a 200 answer into out.
func (c *Client) call(ctx context.Context, method, path string, body []byte, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// do sends the request to each master in turn and returns the first 2xx
// response. A master that cannot be reached or answers 503 (no leader
// known, electing) passes the call on to the next; any other error answer
// ends the call. When every master was unavailable it tries them all again
// after a pause, until ctx ends (as Nomad's servers hold a request through
// an election), and then returns the last master's error. Masters that
// all refuse the connection refusedRounds times in a row are not running
// there: the call ends then.
func (c *Client) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var last error
	refused := 0
	for pause := retryPause; ; pause = min(2*pause, maxRetryPause) {
		var unknown error
		allRefused := true
		for _, base := range c.bases {
			resp, err := c.follow(ctx, method, base+path, body)
			if err == nil {
				return resp, nil
			}
			allRefused = allRefused && errors.Is(err, syscall.ECONNREFUSED)
			if ctx.Err() != nil {
				if last == nil {
					last = err
				}
				return nil, fmt.Errorf("%w (gave up: %v)", last, ctx.Err())
			}
			last = err
			if errors.Is(err, ErrUnknownMaster) {
				// Another given master may be the leader itself.
				unknown = err
				continue
			}
			if !errors.Is(err, ErrUnavailable) {
				return nil, err
			}
		}
		if unknown != nil {
			return nil, unknown
		}
		if refused++; !allRefused {
			refused = 0
		} else if refused >= refusedRounds {
			return nil, fmt.Errorf("%w: no master is listening at %s (connection refused)", ErrUnavailable, strings.Join(c.bases, ", "))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (gave up: %v)", last, ctx.Err())
		case <-time.After(pause):
		}
	}
}

// follow sends the request to target, following up to maxRedirects leader
// redirects.
func (c *Client) follow(ctx context.Context, method, target string, body []byte) (*http.Response, error) {
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		switch {
		case c.token != "":
			req.Header.Set("Authorization", "Bearer "+c.token)
		case c.principal != "":
			req.SetBasicAuth(c.principal, c.secret)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return resp, nil
		case resp.StatusCode == http.StatusTemporaryRedirect && hop < maxRedirects:
			loc, err := resp.Location()
			resp.Body.Close()
			if err != nil {
				return nil, fmt.Errorf("%w: redirect without a location: %v", ErrUnavailable, err)
			}
			if !c.known(loc) {
				return nil, fmt.Errorf("%w: %s %s: redirected to %s, which is not one of the masters given (%s): "+
					"add the leader's address to them", ErrUnknownMaster, method, target, loc.Host, strings.Join(c.bases, ","))
			}
			target = loc.String()
			continue
		}
		defer resp.Body.Close()
		return nil, statusError(method, target, resp)
	}
}

// known reports whether u is on one of the client's masters: the only
// places its credentials may go.
func (c *Client) known(u *url.URL) bool {
	for _, b := range c.bases {
		if bu, err := url.Parse(b); err == nil && bu.Scheme == u.Scheme && strings.EqualFold(bu.Host, u.Host) {
			return true
		}
	}
	return false
}

// statusError turns an error answer into a *StatusError.
func statusError(method, target string, resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	se := &StatusError{Code: resp.StatusCode, Method: method, URL: target}
	var e Error
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		se.Message, se.LeaderID, se.ErrorCode = e.Error, e.LeaderID, e.Code
	} else {
		se.Message = strings.TrimSpace(string(data))
	}
	return se
}
