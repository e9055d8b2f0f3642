package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// The helpers below serve the tenant isolation tests: a cluster shared by
// two principals, "bob" (a tenant going about its work) and "alice" (a
// tenant attacking it), as production runs it: authenticated NATS, role
// and run-as ACLs, an operator token.

// Who the tenants are, and the Unix users their tasks run as.
const (
	aliceUser = "nobody"
	bobUser   = "daemon"
	opToken   = "operator-secret"
)

// tenantCluster is the shared cluster of an isolation test.
type tenantCluster struct {
	c      *testcluster.Cluster
	agents []*executors.Executor
	// bob is the legitimate tenant's SDK framework; bobLong its task that
	// runs throughout, holding bobSecret in its environment and in the
	// file "secret" of its sandbox, on agents[0].
	bob       *sdkFramework
	bobSecret string
	// alice is a raw NATS connection of principal alice, with the
	// permission violations the servers reported to it.
	alice *tenantConn
}

const bobLong = protocol.TaskID("bob-long")

// newTenantCluster starts three masters and two real agents, both tenants,
// and bob's long task.
func newTenantCluster(t *testing.T, tls bool) *tenantCluster {
	t.Helper()
	creds := map[string]string{"alice": "alice-secret", "bob": "bob-secret"}
	c := testcluster.New(t, testcluster.Options{Masters: 3, Credentials: creds, NATSTLS: tls,
		AgentTimeout: 3 * time.Second,
		// The tenants hold what they are offered; offers go round.
		OfferTimeout: time.Second,
		Configure: func(_ int, cfg *master.Config) {
			cfg.OperatorToken = opToken
			cfg.RunAsACLs = map[string][]string{"alice": {aliceUser}, "bob": {bobUser}}
			cfg.RoleACLs = map[string][]string{"alice": {"research"}, "bob": {"eng/*"}}
		}})
	tc := &tenantCluster{c: c, bobSecret: protocol.NewID("bob-private")}
	for range 2 {
		// Task users must traverse the directories above the sandboxes.
		tc.agents = append(tc.agents, executors.New(t, c, executors.Options{WorkDir: testutil.TraversableTempDir(t)}))
	}
	tc.bob = tc.tenant(t, "bob", bobUser, "eng/prod")
	long := shTask(string(bobLong), `printf %s "$BOB_SECRET" > secret; chmod 600 secret; exec sleep 600`)
	long.Command.Env = map[string]string{"BOB_SECRET": tc.bobSecret}
	tc.bob.launch(t, tc.agents[0].ID(), long)
	tc.bob.rec.WaitState(t, bobLong, protocol.TaskRunning)
	tc.alice = tc.connectAs(t, protocol.Identity{Kind: protocol.KindFramework, Name: "alice"})
	return tc
}

// tenant runs an SDK framework of principal p whose tasks run as user.
func (tc *tenantCluster) tenant(t *testing.T, p, user, role string) *sdkFramework {
	t.Helper()
	id := protocol.Identity{Kind: protocol.KindFramework, Name: p}
	opts := []framework.Option{
		framework.WithNATSURLs(tc.c.NATSURL()), framework.WithLogger(testlog.New(t).Named(p)),
		framework.WithRequestTimeout(time.Second), framework.WithPrincipal(p), framework.WithUser(user),
		framework.WithRole(role), framework.WithFailoverTimeout(time.Hour),
	}
	if ca, cert, key, ok := tc.c.IdentityTLS(id); ok {
		opts = append(opts, framework.WithNATSTLS(ca, cert, key))
	} else {
		opts = append(opts, framework.WithSecret(tc.c.Secret(id)))
	}
	rec := newRecorder()
	d, err := framework.NewDriver(rec, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return runDriver(t, d, rec)
}

// tenantConn is a raw NATS connection of one identity that records what
// the servers refused it.
type tenantConn struct {
	nc         *nats.Conn
	mu         sync.Mutex
	violations []error
}

func (tc *tenantCluster) connectAs(t *testing.T, id protocol.Identity) *tenantConn {
	t.Helper()
	conn := &tenantConn{}
	opts := append(tc.c.ClientOptions(id), nats.Name(id.String()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			conn.mu.Lock()
			conn.violations = append(conn.violations, err)
			conn.mu.Unlock()
		}))
	nc, err := nats.Connect(tc.c.NATSURL(), opts...)
	if err != nil {
		t.Fatalf("connect as %s: %v", id, err)
	}
	t.Cleanup(nc.Close)
	conn.nc = nc
	return conn
}

// refused waits until the servers have reported n permission violations
// to the connection in all, naming each subject of want.
func (c *tenantConn) refused(t *testing.T, n int, want ...string) {
	t.Helper()
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.violations) < n {
			return fmt.Errorf("%d permission violations, want %d", len(c.violations), n)
		}
		for _, s := range want {
			found := false
			for _, err := range c.violations {
				found = found || errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+s+`"`)
			}
			if !found {
				return fmt.Errorf("no permission violation for %q among %v", s, c.violations)
			}
		}
		return nil
	})
}

// violationCount is how many violations the servers reported so far.
func (c *tenantConn) violationCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.violations)
}

// publish encodes body and publishes it on subject, then flushes: once it
// returns, the server has handled the message (and refused it, if it
// did).
func (c *tenantConn) publish(t *testing.T, subject string, typ protocol.MsgType, body any, header nats.Header) {
	t.Helper()
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.nc.PublishMsg(&nats.Msg{Subject: subject, Data: data, Header: header}); err != nil {
		t.Fatal(err)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// call sends body on principal's subjects for it and returns the reply's
// typed error (a request nobody answers fails the test).
func (c *tenantConn) call(t *testing.T, principal string, body, into any) error {
	t.Helper()
	typ, _ := protocol.TypeOf(body)
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := protocol.Subjects{}.RequestSubject(principal, body)
	if err != nil {
		t.Fatal(err)
	}
	var msg *nats.Msg
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() (err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		msg, err = c.nc.RequestWithContext(ctx, subject, data)
		return err
	})
	return protocol.DecodeReply(msg.Data, into)
}

// operator is a client of the masters' operator API with the operator
// token.
func (tc *tenantCluster) operator(t *testing.T) *api.Client {
	t.Helper()
	cl, err := api.NewClient(tc.c.HTTPAddrs(), api.WithToken(opToken))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// state is the cluster's whole state, as the operator sees it.
func (tc *tenantCluster) state(t *testing.T) api.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	st, err := tc.operator(t).State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// bobCarriesOn checks that the legitimate tenant is untouched: its long
// task runs, a new task of it runs to the end on each agent, and its
// driver met no error.
func (tc *tenantCluster) bobCarriesOn(t *testing.T, name string) {
	t.Helper()
	if ts, ok := agentTask(tc.agents[0], tc.bob.d.ID(), bobLong); !ok || ts.State != protocol.TaskRunning {
		t.Fatalf("%s: bob's long task on its agent: %+v (known %v), want running", name, ts, ok)
	}
	for i, e := range tc.agents {
		id := protocol.TaskID(fmt.Sprintf("bob-after-%s-%d", name, i))
		tc.bob.launch(t, e.ID(), shTask(string(id), "echo fine"))
		if st := tc.bob.rec.WaitState(t, id, protocol.TaskFinished); st.ExitCode == nil || *st.ExitCode != 0 {
			t.Fatalf("%s: bob's task on agent %d: %+v", name, i, st.TaskStatus)
		}
	}
	for _, st := range tc.bob.rec.Statuses(bobLong) {
		if st.State != protocol.TaskStaging && st.State != protocol.TaskStarting && st.State != protocol.TaskRunning {
			t.Fatalf("%s: bob heard its long task %s (%s)", name, st.State, st.Message)
		}
	}
	if errs := tc.bob.rec.Errors(); len(errs) > 0 {
		t.Fatalf("%s: bob's driver met errors: %v", name, errs)
	}
}

// tasksNamed counts the tasks in st, live or completed, whose ID starts
// with prefix.
func tasksNamed(st api.State, prefix string) int {
	n := 0
	for _, task := range st.Tasks {
		if strings.HasPrefix(string(task.TaskID), prefix) {
			n++
		}
	}
	for _, f := range append(st.Frameworks, st.CompletedFrameworks...) {
		for _, task := range f.CompletedTasks {
			if strings.HasPrefix(string(task.TaskID), prefix) {
				n++
			}
		}
	}
	return n
}

// requireUsers skips a test whose tasks must run as the tenants' users
// when this process cannot switch users or a user is missing.
func requireUsers(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running tasks as other users needs root")
	}
	for _, u := range []string{aliceUser, bobUser} {
		if _, err := user.Lookup(u); err != nil {
			t.Skipf("user %s: %v", u, err)
		}
	}
}

// listener is an HTTP server that counts the requests it gets and
// remembers whether any carried credentials.
type listener struct {
	srv      *httptest.Server
	requests atomic.Int32
	creds    atomic.Bool
}

func newListener(t *testing.T) *listener {
	t.Helper()
	l := &listener{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.requests.Add(1)
		if r.Header.Get("Authorization") != "" {
			l.creds.Store(true)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(l.srv.Close)
	return l
}

// agentPrincipal is the credential agent id registered with.
func agentPrincipal(t *testing.T, tc *tenantCluster, id protocol.AgentID) string {
	t.Helper()
	a, ok := tc.c.WaitForLeader().View().Agent(id)
	if !ok {
		t.Fatalf("agent %s unknown", id)
	}
	return a.Principal
}

// agentCmdSubject is agent id's command subject.
func agentCmdSubject(t *testing.T, tc *tenantCluster, id protocol.AgentID) string {
	t.Helper()
	s, err := protocol.Subjects{}.AgentCmd(agentPrincipal(t, tc, id), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// agentAPISubject is the subject the agent a body names would send it on.
func agentAPISubject(t *testing.T, tc *tenantCluster, body protocol.AgentCall) string {
	t.Helper()
	s, err := protocol.Subjects{}.RequestSubject(agentPrincipal(t, tc, body.ForAgent()), body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// callSubject sends body on subject and returns the reply's typed error.
func (c *tenantConn) callSubject(t *testing.T, subject string, body, into any) error {
	t.Helper()
	typ, _ := protocol.TypeOf(body)
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	msg, err := c.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		t.Fatalf("request on %s: %v", subject, err)
	}
	return protocol.DecodeReply(msg.Data, into)
}

// coflowOf is bob's coflow id, as the operator sees it.
func coflowOf(t *testing.T, tc *tenantCluster, id string) api.Coflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	cfs, err := tc.operator(t).Coflows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, cf := range cfs.Coflows {
		if cf.CoflowID == id && cf.FrameworkID == string(tc.bob.d.ID()) {
			return cf
		}
	}
	t.Fatalf("no coflow %s of bob among %+v", id, cfs.Coflows)
	return api.Coflow{}
}

// decodeJSON decodes a 200 answer's JSON body into into and closes it.
func decodeJSON(resp *http.Response, into any) error {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
