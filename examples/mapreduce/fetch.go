package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// fileClient reads files from sandboxes through the agents' file servers:
// GET http://<agent>/v1/files/download?path=<sandbox>/<file> with a
// framework files token, which reads that framework's sandboxes on every
// agent. The reducers use it for the shuffle, the framework to check the
// results.
type fileClient struct {
	token string
	// attempts, backoff and timeout: a fetch is tried up to attempts
	// times, each bounded by timeout, waiting backoff (doubling) in
	// between.
	attempts int
	backoff  time.Duration
	timeout  time.Duration
	http     *http.Client
	// coflow, when set, are the coflow and dst parameters that make a
	// fetch part of a shuffle the agents order by coflow priority.
	coflow url.Values
}

// maxFileSize bounds what one fetch reads.
const maxFileSize = 1 << 30

func newFileClient(token string) *fileClient {
	return &fileClient{token: token, attempts: 5, backoff: 100 * time.Millisecond, timeout: 30 * time.Second,
		http: &http.Client{}}
}

// inCoflow makes c's fetches transfers of coflow, to a consumer on agent
// dst; either empty leaves them outside any coflow.
func (c *fileClient) inCoflow(coflow, dst string) *fileClient {
	if coflow != "" && dst != "" {
		c.coflow = url.Values{"coflow": {coflow}, "dst": {dst}}
	}
	return c
}

// errPermanent marks a refusal that retrying cannot cure.
var errPermanent = errors.New("permanent")

// get returns file (slash-separated, "<sandbox>/<name>") from the file
// server at addr (host:port), retrying failures other than a refused
// token.
func (c *fileClient) get(ctx context.Context, addr, file string) ([]byte, error) {
	wait := c.backoff
	var err error
	for attempt := 1; ; attempt++ {
		var data []byte
		data, err = c.once(ctx, addr, file)
		if err == nil || errors.Is(err, errPermanent) || attempt >= c.attempts {
			return data, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (c *fileClient) once(ctx context.Context, addr, file string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	q := url.Values{"path": {file}}
	for k, v := range c.coflow {
		q[k] = v
	}
	u := "http://" + addr + "/v1/files/download?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPermanent, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s from %s: %w", file, addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFileSize+1))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w: get %s from %s: %s: %s", errPermanent, file, addr, resp.Status, clip(data))
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("get %s from %s: %s: %s", file, addr, resp.Status, clip(data))
	case err != nil:
		return nil, fmt.Errorf("get %s from %s: %w", file, addr, err)
	case len(data) > maxFileSize:
		return nil, fmt.Errorf("%w: get %s from %s: larger than %d bytes", errPermanent, file, addr, maxFileSize)
	}
	return data, nil
}
