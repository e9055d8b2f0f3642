package integration

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestJobs_httpChecksFits: a job file submitted over HTTP is checked
// against the active agents as `allot jobs run --masters` checks it: a
// group no agent meets the constraints of, or whose instance needs more
// than any agent has, is refused at the group's position and nothing is
// submitted; one that fits is.
func TestJobs_httpChecksFits(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	c.NewAgent(testcluster.AgentOptions{Resources: agentResources(4)})
	cl, err := api.NewClient(c.HTTPAddrs())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	group := func(extra string, cpus float64) string {
		return "job \"web\" {\n  group \"g\" {\n" + extra + "    task \"t\" {\n      command = \"true\"\n" +
			"      resources {\n        cpus = " + strconv.FormatFloat(cpus, 'f', -1, 64) + "\n      }\n    }\n  }\n}\n"
	}
	for _, tc := range []struct{ name, src, want string }{
		{"nowhere.hcl", group("    constraints = [\"rack == r9\"]\n", 0.1), "nowhere.hcl:2:3: group \"g\": none of the 1 agents meets its constraints"},
		{"huge.hcl", group("", 64), "huge.hcl:2:3: group \"g\": an instance needs cpus:64000"},
	} {
		_, err := cl.SubmitJob(ctx, protocol.AnonymousPrincipal, api.JobSubmit{File: tc.name, Source: tc.src})
		if !errors.Is(err, protocol.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalidArgument with %q", tc.name, err, tc.want)
		}
	}
	if _, ok := c.WaitForLeader().View().StoreGet("", jobs.SpecKey("web")); ok {
		t.Fatal("a refused file was submitted")
	}
	ch, err := cl.SubmitJob(ctx, protocol.AnonymousPrincipal, api.JobSubmit{Source: group("", 1)})
	if err != nil || ch.Version != 1 {
		t.Fatalf("a file that fits: %+v %v", ch, err)
	}
	if _, ok := c.WaitForLeader().View().StoreGet("", jobs.SpecKey("web")); !ok {
		t.Fatal("the file that fits was not submitted")
	}
}
