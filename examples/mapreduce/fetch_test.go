package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countedServer serves h and counts the requests it answers.
func countedServer(t *testing.T, h http.Handler) (addr string, requests *atomic.Int32) {
	t.Helper()
	requests = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), requests
}

// quickClient is a client with token that retries attempts times without
// waiting long: the tests count attempts, not time.
func quickClient(token string, attempts int) *fileClient {
	c := newFileClient(token)
	c.attempts, c.backoff = attempts, time.Millisecond
	return c
}

// sandboxFile writes a file of n random bytes into a fake agent's root
// as sandbox/name and returns its content.
func sandboxFile(t *testing.T, root, file string, n int) []byte {
	t.Helper()
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range data {
		data[i] = byte(r.IntN(256))
	}
	writeFile(t, filepath.Join(root, filepath.FromSlash(file)), string(data))
	return data
}

func TestFileClient_DownloadRetries(t *testing.T) {
	t.Parallel()
	fs := &fakeFiles{root: t.TempDir(), token: "tok"}
	want := sandboxFile(t, fs.root, "sb/part-0", 300<<10)
	fs.failFirst.Store(2)
	addr, requests := countedServer(t, fs)
	path := filepath.Join(t.TempDir(), "fetched")
	n, err := quickClient("tok", 5).download(context.Background(), addr, "sb/part-0", path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || n != int64(len(want)) {
		t.Errorf("downloaded %d bytes (file %d), want the %d served", n, len(got), len(want))
	}
	if r := requests.Load(); r != 3 {
		t.Errorf("%d requests, want 3: two refused with 503, then the file", r)
	}
}

// TestFileClient_Statuses: refusals of the token are permanent and
// tried once; other failures are tried again up to the attempts.
func TestFileClient_Statuses(t *testing.T) {
	t.Parallel()
	const attempts = 3
	tests := []struct {
		status    int
		permanent bool
	}{
		{http.StatusUnauthorized, true},
		{http.StatusForbidden, true},
		{http.StatusNotFound, false},
		{http.StatusInternalServerError, false},
		{http.StatusServiceUnavailable, false},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			addr, requests := countedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no", tc.status)
			}))
			wantRequests := int32(attempts)
			if tc.permanent {
				wantRequests = 1
			}
			c := quickClient("tok", attempts)
			calls := map[string]func() error{
				"get": func() error { _, err := c.get(context.Background(), addr, "sb/f"); return err },
				"download": func() error {
					_, err := c.download(context.Background(), addr, "sb/f", filepath.Join(t.TempDir(), "f"))
					return err
				},
				"stream": func() error {
					return c.stream(context.Background(), addr, "sb/f", func(io.Reader) error {
						t.Error("stream read a refused file")
						return nil
					})
				},
			}
			for name, call := range calls {
				before := requests.Load()
				err := call()
				if err == nil || errors.Is(err, errPermanent) != tc.permanent || !strings.Contains(err.Error(), strconv.Itoa(tc.status)) {
					t.Errorf("%s: %v: want an error with %d, permanent %v", name, err, tc.status, tc.permanent)
				}
				if got := requests.Load() - before; got != wantRequests {
					t.Errorf("%s: %d requests, want %d", name, got, wantRequests)
				}
			}
		})
	}
}

func TestFileClient_Stream(t *testing.T) {
	t.Parallel()
	fs := &fakeFiles{root: t.TempDir(), token: "tok"}
	want := sandboxFile(t, fs.root, "sb/output", 1<<20)
	fs.failFirst.Store(1)
	addr, requests := countedServer(t, fs)
	c := quickClient("tok", 3)
	var got []byte
	err := c.stream(context.Background(), addr, "sb/output", func(r io.Reader) error {
		var err error
		got, err = io.ReadAll(r)
		return err
	})
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("stream: %d bytes, %v: want the %d served", len(got), err, len(want))
	}
	if r := requests.Load(); r != 2 {
		t.Errorf("%d requests, want 2: the open is retried after a 503", r)
	}

	// What read returns is stream's answer, and reading is not retried:
	// the reader may have used part of the content.
	refused := errors.New("reader refused")
	before := requests.Load()
	err = c.stream(context.Background(), addr, "sb/output", func(io.Reader) error { return refused })
	if !errors.Is(err, refused) || requests.Load()-before != 1 {
		t.Errorf("stream with a failing reader: %v after %d requests, want %v after 1", err, requests.Load()-before, refused)
	}
}

// TestFileClient_CutShort: a body that ends before its Content-Length
// (the agent died mid-file) is an error, not a short file.
func TestFileClient_CutShort(t *testing.T) {
	t.Parallel()
	const sent, declared = 5000, 10000
	addr, requests := countedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(declared))
		w.Write(bytes.Repeat([]byte("x"), sent))
		// Returning short makes the server close the connection.
	}))
	c := quickClient("tok", 2)
	path := filepath.Join(t.TempDir(), "fetched")
	n, err := c.download(context.Background(), addr, "sb/part-0", path)
	if err == nil || errors.Is(err, errPermanent) {
		t.Errorf("download of a cut body: %d bytes, %v: want an error worth retrying", n, err)
	}
	if r := requests.Load(); r != 2 {
		t.Errorf("download: %d requests, want 2 (both attempts)", r)
	}
	if data, err := c.get(context.Background(), addr, "sb/part-0"); err == nil {
		t.Errorf("get of a cut body: %d bytes, no error", len(data))
	}
	err = c.stream(context.Background(), addr, "sb/part-0", func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("stream of a cut body: %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFileClient_CanceledWhileWaiting: a fetch waiting to try again
// gives up when its context ends, with both reasons in its error.
func TestFileClient_CanceledWhileWaiting(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, requests := countedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	c := newFileClient("tok")
	// The context ends once the first answer is in, while the client
	// waits to try again: long enough that only the cancellation can
	// end the wait.
	c.backoff = time.Hour
	base := c.http.Transport
	c.http = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(r)
		cancel()
		return resp, err
	})}
	_, err := c.get(ctx, addr, "sb/f")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "503") {
		t.Errorf("get: %v: want the cancellation and the last failure", err)
	}
	if r := requests.Load(); r != 1 {
		t.Errorf("%d requests, want 1", r)
	}
}
