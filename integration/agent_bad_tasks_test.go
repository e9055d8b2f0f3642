package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/protocol"
)

// fileServer serves one payload at every path and counts the requests
// per path.
type fileServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
}

func newFileServer(t *testing.T, payload string) *fileServer {
	s := &fileServer{requests: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		s.mu.Unlock()
		_, _ = w.Write([]byte(payload))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fileServer) served(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// TestAgent_BadTasks launches broken tasks through the SDK. Each ends
// with a typed status and reason, refused by whichever of master and
// agent first can tell, and the agent carries on: a good task launched
// after them finishes.
func TestAgent_BadTasks(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	e := executors.New(t, c, executors.Options{Attributes: protocol.Attributes{"rack": protocol.Text("r1")}})
	f := startSDK(t, c, framework.WithName("bad"))
	fw, agent := f.d.ID(), e.ID()
	const payload = "payload\n"
	srv := newFileServer(t, payload)
	sum := sha256.Sum256([]byte(payload))

	b := &badTasks{c: c, e: e, f: f, fw: fw, agent: agent, srv: srv}

	t.Run("no command", func(t *testing.T) {
		bad := framework.NewTask("no-cmd", "").CPUs(100).Mem(32).Build()
		o := f.offerOn(t, agent, bad.Resources)
		// The master refuses the accept and reports the task.
		if err := f.d.Launch(sdkCtx(t), []protocol.OfferID{o.ID}, bad); !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Fatalf("Launch: %v, want ErrInvalidArgument", err)
		}
		b.refusedByMaster(t, "no-cmd", protocol.ReasonTaskInvalid)
	})
	t.Run("beyond the offer", func(t *testing.T) {
		var err error
		for range 10 { // on a fresh offer when the one tried went stale
			o := f.offerOn(t, agent, shTask("x", "true").Resources)
			big := framework.NewTask("too-big", "true").Shell().
				CPUs(o.Resources.Scalar(protocol.ResCPUs) + 1000).Mem(32).Build()
			err = f.d.Launch(sdkCtx(t), []protocol.OfferID{o.ID}, big)
			if !errors.Is(err, protocol.ErrUnknownOffer) && !errors.Is(err, protocol.ErrOfferRescinded) {
				break
			}
		}
		if !errors.Is(err, protocol.ErrInsufficient) {
			t.Fatalf("Launch: %v, want ErrInsufficient", err)
		}
		f.rec.WaitStatus(t, "too-big", "ERROR task_invalid for insufficient resources", func(st sdktest.Arrival) bool {
			return st.State == protocol.TaskError && st.Reason == protocol.ReasonTaskInvalid && st.UUID == "" &&
				strings.Contains(st.Message, "insufficient")
		})
		b.noLaunch(t, "too-big")
	})
	t.Run("hard constraint", func(t *testing.T) {
		// The master does not evaluate task constraints at accept: the
		// agent refuses the task.
		bad := shTask("elsewhere", "true")
		bad.Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r9"}}
		f.launch(t, agent, bad)
		st := f.rec.WaitUpdate(t, "elsewhere", protocol.TaskError)
		if st.Reason != protocol.ReasonConstraintViolated || !strings.Contains(st.Message, "rack") {
			t.Errorf("got %s %q, want constraint_violated naming rack", st.Reason, st.Message)
		}
		if ts := waitAgentTask(t, e, fw, "elsewhere", protocol.TaskError); ts.Sandbox != "" {
			t.Errorf("the refused task got sandbox %q", ts.Sandbox)
		}
	})
	t.Run("sha256 mismatch", func(t *testing.T) {
		bad := framework.NewTask("bad-sum", "true").Shell().CPUs(100).Mem(32).
			URI(protocol.URI{Value: srv.URL + "/payload", Sha256: strings.Repeat("0", 64)}).Build()
		f.launch(t, agent, bad)
		st := f.rec.WaitUpdate(t, "bad-sum", protocol.TaskFailed)
		if st.Reason != protocol.ReasonFetchFailed || !strings.Contains(st.Message, "sha256") {
			t.Errorf("got %s %q, want fetch_failed about sha256", st.Reason, st.Message)
		}
		if srv.served("/payload") == 0 {
			t.Error("the agent never fetched the URI")
		}
	})
	t.Run("output escapes the sandbox", b.outputEscapes)

	// The agent carries on: a good task, fetching the same URI, finishes.
	good := framework.NewTask("good", "cat in.txt").Shell().CPUs(100).Mem(32).
		URI(protocol.URI{Value: srv.URL + "/payload", Sha256: hex.EncodeToString(sum[:]), OutputFile: "in.txt"}).Build()
	f.launch(t, agent, good)
	st := f.rec.WaitState(t, "good", protocol.TaskFinished)
	if st.ExitCode == nil || *st.ExitCode != 0 {
		t.Errorf("good: exit code %v", st.ExitCode)
	}
	if out := readSandbox(t, e, sandboxOf(t, e, fw, "good"), "stdout"); out != payload {
		t.Errorf("good: stdout %q, want %q", out, payload)
	}
	if ag, ok := c.WaitForLeader().View().Agent(agent); !ok || ag.State != "active" {
		t.Errorf("agent in the master: %+v, want active", ag)
	}
}

// badTasks is TestAgent_BadTasks' cluster: one agent, e, and the SDK
// framework f that launches on it, with a file server for its URIs.
type badTasks struct {
	c     *testcluster.Cluster
	e     *executors.Executor
	f     *sdkFramework
	fw    protocol.FrameworkID
	agent protocol.AgentID
	srv   *fileServer
}

// noLaunch asserts that a task refused before launch never reached
// the master's task table nor the agent.
func (b *badTasks) noLaunch(t *testing.T, id protocol.TaskID) {
	t.Helper()
	if _, ok := b.c.WaitForLeader().View().Task(b.fw, id); ok {
		t.Errorf("the master holds %s", id)
	}
	if _, ok := agentTask(b.e, b.fw, id); ok {
		t.Errorf("the agent knows %s", id)
	}
}

// refusedByMaster asserts the master's TASK_ERROR for a task whose
// accept it refused: sent by the master (no UUID), with reason.
func (b *badTasks) refusedByMaster(t *testing.T, id protocol.TaskID, reason string) {
	t.Helper()
	st := b.f.rec.WaitState(t, id, protocol.TaskError)
	if st.Reason != reason || st.UUID != "" {
		t.Errorf("%s: got %s %q uuid %q, want %s from the master", id, st.Reason, st.Message, st.UUID, reason)
	}
	b.noLaunch(t, id)
}

// outputEscapes launches a task whose URI's output file lies outside its
// sandbox: the master refuses it, and nothing is fetched or written.
func (b *badTasks) outputEscapes(t *testing.T) {
	bad := framework.NewTask("escape", "true").Shell().CPUs(100).Mem(32).
		URI(protocol.URI{Value: b.srv.URL + "/evil", OutputFile: "../evil"}).Build()
	o := b.f.offerOn(t, b.agent, bad.Resources)
	if err := b.f.d.Launch(sdkCtx(t), []protocol.OfferID{o.ID}, bad); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("Launch: %v, want ErrInvalidArgument", err)
	}
	b.refusedByMaster(t, "escape", protocol.ReasonTaskInvalid)
	if st := b.f.rec.Statuses("escape"); !strings.Contains(st[0].Message, "escapes the sandbox") {
		t.Errorf("message %q, want it to say the output escapes the sandbox", st[0].Message)
	}
	if n := b.srv.served("/evil"); n != 0 {
		t.Errorf("the URI was fetched %d times", n)
	}
	for _, p := range []string{filepath.Join(b.e.Agent().SandboxRoot(), "evil"), filepath.Join(b.e.WorkDir(), "evil")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists (%v)", p, err)
		}
	}
}
