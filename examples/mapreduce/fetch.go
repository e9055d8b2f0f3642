package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

// fileClient reads files from sandboxes through the agents' file servers:
// GET http://<agent>/v1/files/download?path=<sandbox>/<file> with a
// framework files token, which reads that framework's sandboxes on every
// agent. The reducers use it for the shuffle, the framework to check the
// results.
type fileClient struct {
	token string
	// attempts and backoff: a fetch is tried up to attempts times,
	// waiting backoff (doubling) in between.
	attempts int
	backoff  time.Duration
	http     *http.Client
	// coflow, when set, are the coflow and dst parameters that make a
	// fetch part of a shuffle the agents order by coflow priority.
	coflow url.Values
}

// answerTimeout bounds the wait for a file server's answer to begin; a
// file's content may take as long as it takes.
const answerTimeout = 30 * time.Second

// maxFileSize bounds what get reads into memory; download and stream
// take files of any size.
const maxFileSize = 1 << 30

func newFileClient(token string) *fileClient {
	return &fileClient{token: token, attempts: 5, backoff: 100 * time.Millisecond,
		http: &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: answerTimeout, MaxIdleConnsPerHost: 4}}}
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
	var data []byte
	err := c.retry(ctx, func() error {
		body, err := c.open(ctx, addr, file)
		if err != nil {
			return err
		}
		defer body.Close()
		data, err = io.ReadAll(io.LimitReader(body, maxFileSize+1))
		switch {
		case err != nil:
			return fmt.Errorf("get %s from %s: %w", file, addr, err)
		case len(data) > maxFileSize:
			return fmt.Errorf("%w: get %s from %s: larger than %d bytes", errPermanent, file, addr, maxFileSize)
		}
		return nil
	})
	return data, err
}

// download copies file from the file server at addr into the local file
// path, retrying as get does (each attempt starts the copy over), and
// returns its size.
func (c *fileClient) download(ctx context.Context, addr, file, path string) (int64, error) {
	var n int64
	err := c.retry(ctx, func() error {
		body, err := c.open(ctx, addr, file)
		if err != nil {
			return err
		}
		defer body.Close()
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("%w: %w", errPermanent, err)
		}
		n, err = io.Copy(f, body)
		if cerr := f.Close(); err == nil && cerr != nil {
			return fmt.Errorf("%w: %w", errPermanent, cerr)
		}
		if err != nil {
			return fmt.Errorf("get %s from %s: %w", file, addr, err)
		}
		return nil
	})
	return n, err
}

// stream passes file's content to read as it arrives; only opening the
// file is retried.
func (c *fileClient) stream(ctx context.Context, addr, file string, read func(io.Reader) error) error {
	var body io.ReadCloser
	err := c.retry(ctx, func() error {
		var err error
		body, err = c.open(ctx, addr, file)
		return err
	})
	if err != nil {
		return err
	}
	defer body.Close()
	return read(body)
}

// retry runs try up to c.attempts times, waiting c.backoff (doubling) in
// between, until it succeeds or fails permanently.
func (c *fileClient) retry(ctx context.Context, try func() error) error {
	wait := c.backoff
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil || errors.Is(err, errPermanent) || attempt >= c.attempts {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// open requests file and returns its body once the server answered 200;
// the response's headers must come within answerTimeout.
func (c *fileClient) open(ctx context.Context, addr, file string) (io.ReadCloser, error) {
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
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, fmt.Errorf("%w: get %s from %s: %s: %s", errPermanent, file, addr, resp.Status, clip(msg))
	}
	return nil, fmt.Errorf("get %s from %s: %s: %s", file, addr, resp.Status, clip(msg))
}
