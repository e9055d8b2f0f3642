package files

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

func TestDownload_WholeFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	data := "key\x00\xff\xfevalue\n" // bytes a JSON read would mangle
	f.write("sb/out/part-0", data)
	resp, body := f.get("download", url.Values{"path": {"sb/out/part-0"}})
	if resp.StatusCode != http.StatusOK || string(body) != data {
		t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, body, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Fatalf("got content type %q, want application/octet-stream", ct)
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename=part-0` {
		t.Fatalf("got content disposition %q", cd)
	}
}

func TestDownload_Range(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/out/part-0", "0123456789")
	cases := []struct {
		rng, want, contentRange string
	}{
		{"bytes=2-5", "2345", "bytes 2-5/10"},
		{"bytes=7-", "789", "bytes 7-9/10"},
		{"bytes=-3", "789", "bytes 7-9/10"},
	}
	for _, tc := range cases {
		t.Run(tc.rng, func(t *testing.T) {
			t.Parallel()
			req := f.request(context.Background(), "download", url.Values{"path": {"sb/out/part-0"}})
			req.Header.Set("Range", tc.rng)
			resp, body := f.do(req)
			if resp.StatusCode != http.StatusPartialContent || string(body) != tc.want {
				t.Fatalf("got %d %q, want 206 %q", resp.StatusCode, body, tc.want)
			}
			if got := resp.Header.Get("Content-Range"); got != tc.contentRange {
				t.Fatalf("got Content-Range %q, want %q", got, tc.contentRange)
			}
		})
	}
}

func TestDownload_UnsatisfiableRange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "0123")
	req := f.request(context.Background(), "download", url.Values{"path": {"sb/stdout"}})
	req.Header.Set("Range", "bytes=10-20")
	resp, _ := f.do(req)
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("got status %d, want 416", resp.StatusCode)
	}
}

func TestDownload_Head(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "0123456789")
	req := f.request(context.Background(), "download", url.Values{"path": {"sb/stdout"}})
	req.Method = http.MethodHead
	resp, body := f.do(req)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.ContentLength != 10 {
		t.Fatalf("got %d, %d body bytes, length %d; want 200, none, 10", resp.StatusCode, len(body), resp.ContentLength)
	}
}
