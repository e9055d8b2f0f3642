package master

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLeader_contextsEndWithLeadership: what a leader hands out to serve
// requests and its own work ends when it steps down, though neither its
// timeout nor the request has ended, so a deposed leader's callers stop
// waiting on Raft at once; a request's own end still ends its context.
func TestLeader_contextsEndWithLeadership(t *testing.T) {
	t.Parallel()
	m, _ := apiTestMaster(t, nil)
	m.mu.Lock()
	l := m.leader
	m.mu.Unlock()
	if l == nil {
		t.Fatal("the test master does not lead")
	}
	request, endRequest := context.WithCancel(context.Background())
	ended, cancelEnded := l.requestContext(request)
	defer cancelEnded()
	endRequest()
	select {
	case <-ended.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a request's context outlived the request")
	}

	served, cancelServed := l.requestContext(context.Background())
	defer cancelServed()
	own, cancelOwn := l.timed()
	defer cancelOwn()
	if served.Err() != nil || own.Err() != nil {
		t.Fatalf("contexts ended before the leader stepped down: %v, %v", served.Err(), own.Err())
	}
	m.stepDown()
	for name, ctx := range map[string]context.Context{"a request's": served, "the leader's own": own} {
		select {
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.Canceled) {
				t.Errorf("%s context ended by %v, want cancelled (not its timeout)", name, ctx.Err())
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s context outlived the leadership", name)
		}
	}
}
