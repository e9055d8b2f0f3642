package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// decliner declines every offer for an hour.
type decliner struct{ framework.NopScheduler }

func (decliner) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	for _, o := range offers {
		_ = d.Decline(ctx, []protocol.OfferID{o.ID}, time.Hour)
	}
}

// sandboxWriter launches one task on each agent it is offered, up to n
// agents; each task writes a file and its framework files token into its
// sandbox. It remembers each agent's file server address from the offers.
type sandboxWriter struct {
	framework.NopScheduler
	n        int
	mu       sync.Mutex
	addrOf   map[protocol.TaskID]string
	finished map[protocol.TaskID]bool
}

func (s *sandboxWriter) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	for _, o := range offers {
		s.mu.Lock()
		launch := len(s.addrOf) < s.n && !slices.Contains(slices.Collect(maps.Values(s.addrOf)), o.Addresses.HTTP)
		id := protocol.TaskID(fmt.Sprint("writer-", len(s.addrOf)))
		if launch {
			s.addrOf[id] = o.Addresses.HTTP
		}
		s.mu.Unlock()
		if !launch {
			// An agent that already has a writer is refused for good; the
			// others come round again.
			_ = d.Decline(ctx, []protocol.OfferID{o.ID}, time.Hour)
			continue
		}
		task := framework.NewTask(id, `echo "from $ALLOT_AGENT_ID" > out; printf %s "$ALLOT_FILES_TOKEN" > token`).
			Shell().CPUs(100).Mem(32).Build()
		if err := d.Launch(ctx, []protocol.OfferID{o.ID}, task); err != nil && !errors.Is(err, framework.ErrAmbiguous) {
			// Refused (an offer rescinded by a leader change, say): the
			// writer goes on a later offer. An unanswered launch may have
			// run; reconciliation settles it.
			s.mu.Lock()
			delete(s.addrOf, id)
			s.mu.Unlock()
		}
	}
}

func (s *sandboxWriter) StatusUpdate(_ *framework.Driver, st protocol.TaskStatus) {
	if st.State == protocol.TaskFinished {
		s.mu.Lock()
		s.finished[st.TaskID] = true
		s.mu.Unlock()
	}
}

// TestFilesToken_FrameworkReadsItsSandboxes: with one files secret on the
// masters and agents, a framework's subscribe reply carries a token that
// reads its tasks' sandboxes on every agent, at the address the offers
// name; each task gets the same token in ALLOT_FILES_TOKEN, so tasks read
// each other's sandboxes across agents too (the shuffle); and the token
// reads nothing of another framework's.
func TestFilesToken_FrameworkReadsItsSandboxes(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	for i := range 2 {
		executors.New(t, c, executors.Options{Hostname: fmt.Sprint("files-", i)})
	}
	s := &sandboxWriter{n: 2, addrOf: map[protocol.TaskID]string{}, finished: map[protocol.TaskID]bool{}}
	d := runScheduler(t, c, s, "files")
	// The other framework declines what it is offered, so that it holds no
	// agent the writer needs.
	other := runScheduler(t, c, &decliner{}, "other")
	token := d.FilesToken()
	if token == "" || other.FilesToken() == "" || token == other.FilesToken() {
		t.Fatalf("files tokens %q and %q: want two distinct, non-empty", token, other.FilesToken())
	}
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.finished) < s.n {
			return fmt.Errorf("%d of %d tasks finished", len(s.finished), s.n)
		}
		return nil
	})

	get := func(addr, path, token string) (int, string) {
		t.Helper()
		u := "http://" + addr + "/v1/files/download?" + url.Values{"path": {path}}.Encode()
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	agents := map[string]bool{}
	for id, addr := range s.addrOf {
		if addr == "" {
			t.Fatalf("offer for %s named no agent address", id)
		}
		agents[addr] = true
		sandbox := string(d.ID()) + "_" + string(id)
		if code, body := get(addr, sandbox+"/out", token); code != http.StatusOK || !strings.HasPrefix(body, "from ") {
			t.Errorf("%s/out on %s with the framework's token: %d %q", sandbox, addr, code, body)
		}
		// The task's own token reads its framework's sandboxes too.
		code, taskToken := get(addr, sandbox+"/token", token)
		if code != http.StatusOK || taskToken == "" {
			t.Errorf("%s: reading the task's ALLOT_FILES_TOKEN: %d %q", id, code, taskToken)
		} else if code, _ := get(addr, sandbox+"/out", taskToken); code != http.StatusOK {
			t.Errorf("%s: the task's ALLOT_FILES_TOKEN read its own sandbox: %d, want 200", id, code)
		}
		if code, _ := get(addr, sandbox+"/out", other.FilesToken()); code != http.StatusForbidden {
			t.Errorf("another framework's token read %s: status %d, want 403", sandbox, code)
		}
	}
	if len(agents) != 2 {
		t.Errorf("tasks ran on agents %v, want two distinct", agents)
	}
}
