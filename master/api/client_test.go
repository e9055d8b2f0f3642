package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A follower's redirect to a leader on another host keeps the operator
// token (the standard client would drop it), and a master answering 503
// passes the call on to the next.
func TestClient_followsRedirectWithToken(t *testing.T) {
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer op" {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(Error{Error: "this action needs the operator token"})
			return
		}
		_ = json.NewEncoder(w).Encode(AgentState{AgentID: strings.Split(r.URL.Path, "/")[3], State: "draining"})
	}))
	defer leader.Close()
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, leader.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer follower.Close()
	electing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(Error{Error: "no leader is known"})
	}))
	defer electing.Close()

	// The leader is one of the masters given: the token follows the
	// redirect to it.
	c, err := NewClient([]string{electing.URL, strings.TrimPrefix(follower.URL, "http://"), leader.URL}, WithToken("op"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.DrainAgent(testCtx(t), "ag-1")
	if err != nil || st.State != "draining" || st.AgentID != "ag-1" {
		t.Fatalf("DrainAgent: %+v, %v; want ag-1 draining", st, err)
	}

	// A master (or someone posing as the leader) redirects elsewhere: the
	// client does not follow, and the token never reaches that address.
	var seen atomic.Int32
	rogue := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
	}))
	defer rogue.Close()
	misled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, rogue.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer misled.Close()
	c2, err := NewClient([]string{misled.URL}, WithToken("op"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.DrainAgent(testCtx(t), "ag-1"); !errors.Is(err, ErrUnknownMaster) || !strings.Contains(err.Error(), strings.TrimPrefix(rogue.URL, "http://")) {
		t.Fatalf("DrainAgent redirected to an unknown address: %v, want ErrUnknownMaster naming it", err)
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the unknown address got %d requests, want none", n)
	}

	noToken, err := NewClient([]string{follower.URL, leader.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = noToken.DrainAgent(testCtx(t), "ag-1")
	var se *StatusError
	if !errors.Is(err, ErrUnauthorized) || !errors.As(err, &se) || se.Message != "this action needs the operator token" {
		t.Fatalf("DrainAgent without the token: %v, want ErrUnauthorized with the master's reason", err)
	}

	// Every master unavailable until the call's deadline: the last one's
	// error, as ErrUnavailable, after more than one round over them.
	var calls atomic.Int32
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		electing.Config.Handler.ServeHTTP(w, r)
	}))
	defer counting.Close()
	down, err := NewClient([]string{counting.URL, electing.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := down.State(ctx); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no leader is known") {
		t.Fatalf("State with no leader: %v, want ErrUnavailable saying no leader is known", err)
	}
	if n := calls.Load(); n < 2 {
		t.Fatalf("the first master was asked %d times in 500 ms, want the client to try again", n)
	}
}

func TestNewClient_badAddresses(t *testing.T) {
	for _, addrs := range [][]string{nil, {" ", ""}, {"ftp://m1:5050"}, {"http://"}} {
		if _, err := NewClient(addrs); !errors.Is(err, ErrBadRequest) {
			t.Errorf("NewClient(%q): %v, want ErrBadRequest", addrs, err)
		}
	}
	c, err := NewClient([]string{"m1:5050", "https://m2:5051/"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://m1:5050", "https://m2:5051"}; strings.Join(c.bases, " ") != strings.Join(want, " ") {
		t.Fatalf("bases %q, want %q", c.bases, want)
	}
}

func TestFormatResources(t *testing.T) {
	r := protocol.Scalars(map[string]int64{protocol.ResCPUs: 1500, protocol.ResMem: 2048, "gpus": 1, protocol.ResDisk: 0})
	r.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 31009}}}
	if got, want := FormatResources(r), "cpus 1.5, gpus 1, mem 2048 MiB, ports [31000-31009]"; got != want {
		t.Fatalf("FormatResources: %q, want %q", got, want)
	}
	if got := FormatResources(protocol.Resources{}); got != "" {
		t.Fatalf("FormatResources of nothing: %q", got)
	}
}

// Masters that all refuse the connection are not running there: a call
// gives up on them after a few rounds, long before its deadline, and says
// so; one master that answers keeps the call going.
func TestClient_givesUpWhenNoMasterListens(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // its port now refuses connections
	c, err := NewClient([]string{closed.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.State(ctx)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no master is listening at "+closed.URL) {
		t.Fatalf("State with no master listening: %v, want ErrUnavailable saying none listens", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the call waited out its deadline")
	}
}
