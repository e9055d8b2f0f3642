package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// A shuffle's flows count one transfer per map output per reducer: two
// reducers on b and one on c, fetching outputs held twice on a and once
// on b, give a>b 4, b>b 2, a>c 2, b>c 1. An ended job is withdrawn once
// and grows no more.
func TestShuffles_Flows(t *testing.T) {
	s := newShuffles(&printer{w: io.Discard}, "r")
	srcs := []protocol.AgentID{"a", "a", "b"}
	s.reducerPlaced("j", "b", srcs)
	s.reducerPlaced("j", "b", srcs)
	s.reducerPlaced("j", "c", srcs)
	s.reducerPlaced("j", "", srcs) // not placed: nothing
	want := map[[2]protocol.AgentID]int{{"a", "b"}: 4, {"b", "b"}: 2, {"a", "c"}: 2, {"b", "c"}: 1}
	if !reflect.DeepEqual(s.flows["j"], want) {
		t.Fatalf("flows %v, want %v", s.flows["j"], want)
	}
	if got := s.takeDirty(); !reflect.DeepEqual(got, []string{"j"}) {
		t.Fatalf("dirty %v, want [j]", got)
	}
	s.jobEnded("j")
	s.reducerPlaced("j", "d", srcs)
	if got := s.takeDirty(); !reflect.DeepEqual(got, []string{"j"}) || !s.ended["j"] || s.flows["j"][[2]protocol.AgentID{"a", "d"}] != 0 {
		t.Fatalf("after the end: dirty %v, ended %v, flows %v", got, s.ended, s.flows["j"])
	}
	s.jobEnded("never-shuffled")
	if got := s.takeDirty(); len(got) != 0 {
		t.Fatalf("a job without a shuffle was withdrawn: %v", got)
	}
}

// A reducer's fetches name its coflow and its own agent.
func TestFileClient_CoflowParameters(t *testing.T) {
	t.Parallel()
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		_, _ = w.Write([]byte("part"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := newFileClient("tok").inCoflow("wc-1", "ag-2")
	if data, err := c.get(t.Context(), addr, "sb/part-0"); err != nil || string(data) != "part" {
		t.Fatalf("get: %q %v", data, err)
	}
	if query != "coflow=wc-1&dst=ag-2&path=sb%2Fpart-0" {
		t.Fatalf("query %q", query)
	}
	if c := newFileClient("tok").inCoflow("", "ag-2"); c.coflow != nil {
		t.Fatalf("no coflow: parameters %v", c.coflow)
	}
}
