package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_CoflowCompletes runs a shuffle through the whole chain: a
// framework registers a coflow of two flows between two real agents, the
// consumers' downloads name it, the sending agents report each transfer,
// and the leader sees the coflow complete once every registered transfer
// was served (and not before).
func TestCluster_CoflowCompletes(t *testing.T) {
	t.Parallel()
	runCoflow(t, false)
}

// TestCluster_CoflowSurvivesLeaderChange: the coflow state is the leader's
// memory only; after a leader change the framework registers the coflow
// again and the agents report again what they sent, so the new leader
// knows the finished flow and completes the coflow with the last transfer.
func TestCluster_CoflowSurvivesLeaderChange(t *testing.T) {
	t.Parallel()
	runCoflow(t, true)
}

func runCoflow(t *testing.T, killLeader bool) {
	masters := 1
	if killLeader {
		masters = 3
	}
	c := testcluster.New(t, testcluster.Options{Masters: masters})
	for i := range 2 {
		executors.New(t, c, executors.Options{Hostname: fmt.Sprint("shuffle-", i)})
	}
	s := &sandboxWriter{n: 2, addrOf: map[protocol.TaskID]string{}, finished: map[protocol.TaskID]bool{}}
	d := runScheduler(t, c, s, "shuffle")
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.finished) < s.n {
			return fmt.Errorf("%d of %d tasks finished", len(s.finished), s.n)
		}
		return nil
	})
	get := func(addr, path string, q url.Values) string {
		t.Helper()
		q.Set("path", path)
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/files/download?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+d.FilesToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s %s: %d %s", addr, q.Encode(), resp.StatusCode, body)
		}
		return string(body)
	}
	// Each writer's out file names its agent.
	s.mu.Lock()
	addr0, addr1 := s.addrOf["writer-0"], s.addrOf["writer-1"]
	s.mu.Unlock()
	out0, out1 := string(d.ID())+"_writer-0/out", string(d.ID())+"_writer-1/out"
	agentOf := func(addr, path string) protocol.AgentID {
		return protocol.AgentID(strings.TrimSpace(strings.TrimPrefix(get(addr, path, url.Values{}), "from ")))
	}
	a0, a1 := agentOf(addr0, out0), agentOf(addr1, out1)
	if a0 == a1 || !protocol.ValidID(string(a0)) || !protocol.ValidID(string(a1)) {
		t.Fatalf("writers on agents %q and %q, want two", a0, a1)
	}

	if err := d.RegisterCoflow(t.Context(), "shuffle-1", []protocol.FlowSpec{
		{Src: a0, Dst: a1, Transfers: 2}, {Src: a1, Dst: a0, Transfers: 1},
	}); err != nil {
		t.Fatal(err)
	}
	coflows := func() (left, completed int) {
		got, ok := c.WaitForLeader().Coflows()
		if !ok {
			return -1, -1
		}
		for _, cf := range got.Coflows {
			left += cf.FlowsLeft
		}
		return left, int(got.Completed)
	}
	tagged := func(dst protocol.AgentID) url.Values {
		return url.Values{"coflow": {"shuffle-1"}, "dst": {string(dst)}}
	}
	get(addr0, out0, tagged(a1))
	get(addr1, out1, tagged(a0))
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		if left, done := coflows(); left != 1 || done != 0 {
			return fmt.Errorf("%d flows left, %d coflows completed; want 1 and 0", left, done)
		}
		return nil
	})
	if killLeader {
		c.KillLeader()
		testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
			if left, done := coflows(); left != 1 || done != 0 {
				return fmt.Errorf("the new leader has %d flows left, %d coflows completed; want 1 and 0", left, done)
			}
			return nil
		})
	}
	get(addr0, out0, tagged(a1))
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		if left, done := coflows(); left != 0 || done != 1 {
			return fmt.Errorf("%d flows left, %d coflows completed; want 0 and 1", left, done)
		}
		return nil
	})
}
