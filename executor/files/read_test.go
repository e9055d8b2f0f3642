package files

import (
	"net/http"
	"net/url"
	"testing"
)

func TestRead_OffsetAndLength(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "0123456789")
	cases := []struct {
		name           string
		offset, length string // "" leaves the parameter out
		want           ReadResponse
	}{
		{"whole file", "", "", ReadResponse{Offset: 0, Data: "0123456789"}},
		{"from an offset", "4", "", ReadResponse{Offset: 4, Data: "456789"}},
		{"a slice", "2", "3", ReadResponse{Offset: 2, Data: "234"}},
		{"length past the end", "8", "100", ReadResponse{Offset: 8, Data: "89"}},
		{"zero length", "3", "0", ReadResponse{Offset: 3, Data: ""}},
		{"at the end", "10", "", ReadResponse{Offset: 10, Data: ""}},
		{"past the end", "50", "5", ReadResponse{Offset: 50, Data: ""}},
		{"size query", "-1", "", ReadResponse{Offset: 10, Data: ""}},
		{"size query ignores length", "-1", "4", ReadResponse{Offset: 10, Data: ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			params := url.Values{"path": {"sb/stdout"}}
			if tc.offset != "" {
				params.Set("offset", tc.offset)
			}
			if tc.length != "" {
				params.Set("length", tc.length)
			}
			var got ReadResponse
			f.getJSON("read", params, &got)
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRead_LengthCappedAtMaxRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.MaxRead = 4 })
	f.write("sb/stdout", "0123456789")
	for _, length := range []string{"", "5", "1000000"} {
		var got ReadResponse
		f.getJSON("read", url.Values{"path": {"sb/stdout"}, "offset": {"3"}, "length": {length}}, &got)
		if got.Offset != 3 || got.Data != "3456" {
			t.Fatalf("length %q: got %+v, want 4 bytes from 3", length, got)
		}
	}
}

func TestNewHandler_DefaultMaxRead(t *testing.T) {
	t.Parallel()
	h, err := NewHandler(Config{Root: t.TempDir(), Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.(*handler).maxRead; got != DefaultMaxRead {
		t.Fatalf("got max read %d, want DefaultMaxRead (%d)", got, DefaultMaxRead)
	}
}

func TestRead_BadParameters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "x")
	for _, params := range []url.Values{
		{"path": {"sb/stdout"}, "offset": {"-2"}},
		{"path": {"sb/stdout"}, "offset": {"abc"}},
		{"path": {"sb/stdout"}, "length": {"-1"}},
		{"path": {"sb/stdout"}, "length": {"1.5"}},
		{"offset": {"0"}},
	} {
		resp, body := f.get("read", params)
		wantError(t, resp, body, http.StatusBadRequest, CodeBadRequest)
	}
}
