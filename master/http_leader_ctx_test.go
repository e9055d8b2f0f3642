package master

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLeaderOnly_cancelledWhenLeadershipEnds: a leader-only request still
// running when its master stops leading sees its context cancelled, so it
// gives up instead of acting for a former leader. A request that ends on
// its own leaves the leader's context alone.
func TestLeaderOnly_cancelledWhenLeadershipEnds(t *testing.T) {
	t.Parallel()
	l := &leader{}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	m := &Master{leader: l}

	quick := m.leaderOnly(func(w http.ResponseWriter, _ *http.Request, _ *leader) { w.WriteHeader(http.StatusNoContent) })
	quick.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/x", nil))
	if l.ctx.Err() != nil {
		t.Fatal("a finished request cancelled the leader's context")
	}

	started, ended := make(chan struct{}), make(chan error, 1)
	slow := m.leaderOnly(func(_ http.ResponseWriter, r *http.Request, _ *leader) {
		close(started)
		<-r.Context().Done()
		ended <- r.Context().Err()
	})
	go slow.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/x", nil))
	<-started
	l.cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("request context ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request's context was not cancelled when leadership ended")
	}
}
