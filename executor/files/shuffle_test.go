package files

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
)

// doneCall is one end of a transfer reported to fakeShuffle.
type doneCall struct {
	t     Transfer
	bytes int64
	ok    bool
}

// fakeShuffle grants every transfer at once, or waits for the request to
// end when block is set, or fails with err; it records what it is told.
type fakeShuffle struct {
	block bool
	err   error

	mu       sync.Mutex
	acquired []Transfer
	paces    int
	ended    chan doneCall
}

func newFakeShuffle() *fakeShuffle { return &fakeShuffle{ended: make(chan doneCall, 16)} }

func (s *fakeShuffle) Acquire(ctx context.Context, t Transfer) (Flow, error) {
	s.mu.Lock()
	s.acquired = append(s.acquired, t)
	s.mu.Unlock()
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	return &fakeFlow{s: s, t: t}, nil
}

// fakeFlow paces nothing; it sums what it is told was sent, and reports
// an end whose bytes disagree with that sum as -1 bytes.
type fakeFlow struct {
	s     *fakeShuffle
	t     Transfer
	sent  int64
	paced int64 // bytes asked for
	next  int   // the next chunk the last Pace announced
	once  sync.Once
}

func (f *fakeFlow) Pace(ctx context.Context, n, next int) error {
	if n <= 0 || n > paceChunk {
		return fmt.Errorf("pace %d bytes, want 1 to %d", n, paceChunk)
	}
	if f.sent != f.paced {
		return fmt.Errorf("pace asked after %d bytes granted but %d sent", f.paced, f.sent)
	}
	if f.paced > 0 && f.next > 0 && f.next != n {
		return fmt.Errorf("pace %d bytes after %d were announced", n, f.next)
	}
	f.paced += int64(n)
	f.next = next
	f.s.mu.Lock()
	f.s.paces++
	f.s.mu.Unlock()
	return ctx.Err()
}

func (f *fakeFlow) Sent(n int64) { f.sent += n }

func (f *fakeFlow) Done(n int64, ok bool) {
	if n != f.sent {
		n = -1
	}
	f.once.Do(func() { f.s.ended <- doneCall{f.t, n, ok} })
}

func (s *fakeShuffle) transfers() []Transfer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Transfer(nil), s.acquired...)
}

// next waits for the next reported end of a transfer.
func (s *fakeShuffle) next(t *testing.T) doneCall {
	t.Helper()
	select {
	case d := <-s.ended:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no transfer reported its end")
		return doneCall{}
	}
}

// noMoreEnds fails if a transfer end was reported that the test did not
// take. Ends are reported before the handler returns, so once the client
// has the whole response there is nothing in flight.
func (s *fakeShuffle) noMoreEnds(t *testing.T) {
	t.Helper()
	select {
	case d := <-s.ended:
		t.Fatalf("unexpected transfer end %+v", d)
	default:
	}
}

func shuffleFixture(t *testing.T, s Shuffle) *fixture {
	t.Helper()
	return newFixture(t, func(c *Config) { c.Shuffle = s; c.Secret = "cluster-secret" })
}

func TestShuffle_DownloadIsGatedAndCounted(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	f := shuffleFixture(t, s)
	f.write("fw-1_map-0/part-3", "0123456789")

	params := url.Values{"path": {"fw-1_map-0/part-3"}, "coflow": {"shuffle-1"}, "dst": {"ag-2"}}
	resp, body := f.get("download", params)
	if resp.StatusCode != http.StatusOK || string(body) != "0123456789" {
		t.Fatalf("got %d %q, want 200 and the file", resp.StatusCode, body)
	}
	want := Transfer{Framework: "fw-1", Coflow: "shuffle-1", Dst: "ag-2"}
	if d := s.next(t); d != (doneCall{want, 10, true}) {
		t.Fatalf("got end %+v, want %+v with 10 bytes, completed", d, want)
	}

	// A range counts what it sent.
	req := f.request(context.Background(), "download", params)
	req.Header.Set("Range", "bytes=2-5")
	if resp, body := f.do(req); resp.StatusCode != http.StatusPartialContent || string(body) != "2345" {
		t.Fatalf("range: got %d %q", resp.StatusCode, body)
	}
	if d := s.next(t); d != (doneCall{want, 4, true}) {
		t.Fatalf("range: got end %+v, want 4 bytes, completed", d)
	}

	// A framework token names the framework, "_" in its ID and all.
	f.write("fw_x_map-0/part-0", "abc")
	req = f.request(context.Background(), "download", url.Values{"path": {"fw_x_map-0/part-0"}, "coflow": {"c"}, "dst": {"ag-3"}})
	req.Header.Set("Authorization", "Bearer "+FrameworkToken("cluster-secret", "fw_x", time.Now().Add(time.Hour)))
	if resp, body := f.do(req); resp.StatusCode != http.StatusOK {
		t.Fatalf("framework token: got %d %s", resp.StatusCode, body)
	}
	if d := s.next(t); d != (doneCall{Transfer{"fw_x", "c", "ag-3"}, 3, true}) {
		t.Fatalf("framework token: got end %+v, want framework fw_x", d)
	}
	s.noMoreEnds(t)
}

// TestShuffle_DownloadIsPacedByChunks: a download's body goes out a chunk
// at a time, each paced before it is written and counted after.
func TestShuffle_DownloadIsPacedByChunks(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	f := shuffleFixture(t, s)
	data := strings.Repeat("x", 2*paceChunk+1000)
	f.write("fw-1_map-0/part-0", data)
	resp, body := f.get("download", url.Values{"path": {"fw-1_map-0/part-0"}, "coflow": {"c1"}, "dst": {"ag-2"}})
	if resp.StatusCode != http.StatusOK || string(body) != data {
		t.Fatalf("got %d, %d bytes; want 200 and the file", resp.StatusCode, len(body))
	}
	if d := s.next(t); d != (doneCall{Transfer{"fw-1", "c1", "ag-2"}, int64(len(data)), true}) {
		t.Fatalf("got end %+v, want %d bytes, completed", d, len(data))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paces < 3 || s.paces > 4 {
		t.Fatalf("%d paces for %d bytes in chunks of %d, want 3 (4 with one at the end)", s.paces, len(data), paceChunk)
	}
}

func TestShuffle_FailedTransfersAreNotComplete(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	f := shuffleFixture(t, s)
	f.write("fw-1_map-0/part-0", "0123")
	want := Transfer{Framework: "fw-1", Coflow: "c1", Dst: "ag-2"}

	resp, body := f.get("download", url.Values{"path": {"fw-1_map-0/missing"}, "coflow": {"c1"}, "dst": {"ag-2"}})
	wantError(t, resp, body, http.StatusNotFound, CodeNotFound)
	if d := s.next(t); d != (doneCall{want, 0, false}) {
		t.Fatalf("missing file: got end %+v, want 0 bytes, not completed", d)
	}

	req := f.request(context.Background(), "download", url.Values{"path": {"fw-1_map-0/part-0"}, "coflow": {"c1"}, "dst": {"ag-2"}})
	req.Header.Set("Range", "bytes=10-20")
	if resp, _ := f.do(req); resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("bad range: got %d, want 416", resp.StatusCode)
	}
	if d := s.next(t); d.ok || d.t != want {
		t.Fatalf("bad range: got end %+v, want not completed", d)
	}
	s.noMoreEnds(t)
}

// failingWriter accepts limit body bytes and then fails, like a client
// that went away mid-transfer.
type failingWriter struct {
	*httptest.ResponseRecorder
	limit int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n, _ := w.ResponseRecorder.Write(p[:w.limit])
		w.limit = 0
		return n, errors.New("connection reset")
	}
	w.limit -= len(p)
	return w.ResponseRecorder.Write(p)
}

func TestShuffle_CutTransferIsNotComplete(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	h, err := NewHandler(Config{Root: t.TempDir(), Token: testToken, Shuffle: s})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: h.(*handler).root}
	f.write("fw-1_map-0/part-0", "0123456789")
	req := httptest.NewRequest(http.MethodGet, "/v1/files/download?path=fw-1_map-0/part-0&coflow=c1&dst=ag-2", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	h.ServeHTTP(&failingWriter{ResponseRecorder: httptest.NewRecorder(), limit: 4}, req)
	if d := s.next(t); d != (doneCall{Transfer{"fw-1", "c1", "ag-2"}, 4, false}) {
		t.Fatalf("got end %+v, want 4 bytes, not completed", d)
	}
}

func TestShuffle_BadParameters(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	f := shuffleFixture(t, s)
	f.write("fw-1_map-0/part-0", "x")
	f.write("nosandbox/part-0", "x")
	for name, params := range map[string]url.Values{
		"bad coflow":   {"path": {"fw-1_map-0/part-0"}, "coflow": {"no spaces"}, "dst": {"ag-2"}},
		"empty coflow": {"path": {"fw-1_map-0/part-0"}, "coflow": {""}, "dst": {"ag-2"}},
		"no dst":       {"path": {"fw-1_map-0/part-0"}, "coflow": {"c1"}},
		"bad dst":      {"path": {"fw-1_map-0/part-0"}, "coflow": {"c1"}, "dst": {"ag/2"}},
		"no framework": {"path": {"nosandbox/part-0"}, "coflow": {"c1"}, "dst": {"ag-2"}},
	} {
		resp, body := f.get("download", params)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: got %d (%s), want 400", name, resp.StatusCode, body)
			continue
		}
		wantError(t, resp, body, http.StatusBadRequest, CodeBadRequest)
	}
	if got := s.transfers(); len(got) != 0 {
		t.Fatalf("refused requests acquired %v", got)
	}
}

func TestShuffle_UngatedRequests(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	f := shuffleFixture(t, s)
	f.write("fw-1_map-0/part-0", "data")

	if resp, body := f.get("download", url.Values{"path": {"fw-1_map-0/part-0"}}); resp.StatusCode != http.StatusOK || string(body) != "data" {
		t.Fatalf("without coflow: got %d %q", resp.StatusCode, body)
	}
	req := f.request(context.Background(), "download", url.Values{"path": {"fw-1_map-0/part-0"}, "coflow": {"c1"}, "dst": {"ag-2"}})
	req.Method = http.MethodHead
	if resp, _ := f.do(req); resp.StatusCode != http.StatusOK || resp.ContentLength != 4 {
		t.Fatalf("HEAD: got %d length %d", resp.StatusCode, resp.ContentLength)
	}
	// The download without a coflow went to the Shuffle as one of no
	// coflow (paced, not ordered); the HEAD did not.
	if got := s.transfers(); len(got) != 1 || got[0].Coflow != "" || got[0].Dst != "" {
		t.Fatalf("ungated requests acquired %v, want the download without a coflow alone", got)
	}

	// Without a Shuffle the parameters are ignored, even invalid ones.
	plain := newFixture(t, nil)
	plain.write("fw-1_map-0/part-0", "data")
	resp, body := plain.get("download", url.Values{"path": {"fw-1_map-0/part-0"}, "coflow": {"bad id!"}})
	if resp.StatusCode != http.StatusOK || string(body) != "data" {
		t.Fatalf("no shuffle: got %d %q", resp.StatusCode, body)
	}
}

func TestShuffle_CancelWhileWaitingWritesNothing(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	s.block = true
	h, err := NewHandler(Config{Root: t.TempDir(), Token: testToken, Shuffle: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/files/download?path=fw-1_map-0/part-0&coflow=c1&dst=ag-2", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(rec, req)
	}()
	waitAcquired(t, s, 1)
	cancel()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not return after the client gave up")
	}
	if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
		t.Fatalf("wrote %q with headers %v, want nothing", rec.Body.String(), rec.Header())
	}
	s.noMoreEnds(t)
}

func TestShuffle_StoppedShuffleAnswers503(t *testing.T) {
	t.Parallel()
	s := newFakeShuffle()
	s.err = ErrShuffleStopped
	f := shuffleFixture(t, s)
	f.write("fw-1_map-0/part-0", "data")
	resp, body := f.get("download", url.Values{"path": {"fw-1_map-0/part-0"}, "coflow": {"c1"}, "dst": {"ag-2"}})
	wantError(t, resp, body, http.StatusServiceUnavailable, CodeUnavailable)
}

// waitAcquired waits until n transfers reached Acquire.
func waitAcquired(t *testing.T, s *fakeShuffle, n int) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, time.Millisecond, func() error {
		if got := len(s.transfers()); got < n {
			return fmt.Errorf("%d transfers acquired, want %d", got, n)
		}
		return nil
	})
}
