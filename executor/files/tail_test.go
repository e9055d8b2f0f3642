package files

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
)

func TestTailStart(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", tailChunk+10) + "\n" // a line longer than a chunk
	cases := []struct {
		name  string
		data  string
		n     int
		limit int64
		want  string
	}{
		{"last two", "a\nb\nc\n", 2, 100, "b\nc\n"},
		{"no final newline", "a\nb\nc", 2, 100, "b\nc"},
		{"more than there are", "a\nb\n", 5, 100, "a\nb\n"},
		{"exactly all", "a\nb\n", 2, 100, "a\nb\n"},
		{"zero lines", "a\nb\n", 0, 100, ""},
		{"empty file", "", 3, 100, ""},
		{"empty lines count", "a\n\n\n", 2, 100, "\n\n"},
		{"limit cuts mid-line", "aaaa\nbbbbbbbb\n", 1, 4, "bbb\n"},
		{"across chunks", "first\n" + long + "last\n", 2, 1 << 20, long + "last\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := strings.NewReader(tc.data)
			start, err := tailStart(r, int64(len(tc.data)), tc.n, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.data[start:]; got != tc.want {
				t.Fatalf("got %q, want %q", shorten(got), shorten(tc.want))
			}
		})
	}
}

// shorten keeps failure messages about long lines readable.
func shorten(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%s...(%d bytes)", s[:40], len(s))
	}
	return s
}

func TestTail_Lines(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var all strings.Builder
	for i := range 150 {
		fmt.Fprintf(&all, "line %d\n", i)
	}
	f.write("sb/stdout", all.String())
	lastLines := func(n int) string {
		lines := strings.SplitAfter(all.String(), "\n")
		return strings.Join(lines[len(lines)-1-n:], "")
	}
	cases := []struct {
		name, lines, want string
	}{
		{"default 100", "", lastLines(100)},
		{"three", "3", lastLines(3)},
		{"none", "0", ""},
		{"over the cap", "20000", all.String()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			params := url.Values{"path": {"sb/stdout"}}
			if tc.lines != "" {
				params.Set("lines", tc.lines)
			}
			resp, body := f.get("tail", params)
			if resp.StatusCode != http.StatusOK || string(body) != tc.want {
				t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, shorten(string(body)), shorten(tc.want))
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Fatalf("got content type %q, want text/plain", ct)
			}
		})
	}
}

func TestTail_CappedAtMaxRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.MaxRead = 5 })
	f.write("sb/stdout", "one\ntwo\nthree\n")
	resp, body := f.get("tail", url.Values{"path": {"sb/stdout"}, "lines": {"2"}})
	if resp.StatusCode != http.StatusOK || string(body) != "hree\n" {
		t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, body, "hree\n")
	}
}

func TestTail_BadParameters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "x\n")
	for _, params := range []url.Values{
		{"path": {"sb/stdout"}, "lines": {"-1"}},
		{"path": {"sb/stdout"}, "lines": {"many"}},
		{"path": {"sb/stdout"}, "follow": {"maybe"}},
	} {
		resp, body := f.get("tail", params)
		wantError(t, resp, body, http.StatusBadRequest, CodeBadRequest)
	}
}

// followTail starts a followed tail of name and collects its body until the
// test ends.
func followTail(t *testing.T, f *fixture, name, lines string) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req := f.request(ctx, "tail", url.Values{"path": {name}, "lines": {lines}, "follow": {"1"}})
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("got status %d, want 200", resp.StatusCode)
	}
	body := &syncBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(body, resp.Body)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		resp.Body.Close()
	})
	return body
}

// waitBody waits for a followed body to read want.
func waitBody(t *testing.T, body *syncBuffer, want string) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := body.String(); got != want {
			return fmt.Errorf("got %q, want %q", got, want)
		}
		return nil
	})
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func TestTail_FollowStreamsAppendedData(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	path := f.write("sb/stdout", "one\ntwo\n")
	body := followTail(t, f, "sb/stdout", "1")
	waitBody(t, body, "two\n")
	appendTo(t, path, "three\n")
	waitBody(t, body, "two\nthree\n")
	appendTo(t, path, "four, no newline yet")
	waitBody(t, body, "two\nthree\nfour, no newline yet")
}

func TestTail_FollowRestartsAfterTruncation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	path := f.write("sb/stdout", "a long first line\n")
	body := followTail(t, f, "sb/stdout", "10")
	waitBody(t, body, "a long first line\n")
	if err := os.WriteFile(path, []byte("new\n"), 0o644); err != nil { // shorter: seen as truncated
		t.Fatal(err)
	}
	waitBody(t, body, "a long first line\nnew\n")
}

func TestTail_FollowEndsWithTheRequestContext(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "one\n")
	h, err := NewHandler(Config{Root: f.root, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := f.request(ctx, "tail", url.Values{"path": {"sb/stdout"}, "follow": {"true"}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req) // returns at once: the context has ended
	if rec.Code != http.StatusOK || rec.Body.String() != "one\n" || !rec.Flushed {
		t.Fatalf("got %d %q flushed=%v, want 200 %q flushed", rec.Code, rec.Body.String(), rec.Flushed, "one\n")
	}
}
