package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// The operator commands against a running master trio: status, listings,
// explain, drain and activate with the operator token, role settings, and
// clear one-line failures.
func TestOperatorCommands(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1, Configure: func(_ int, cfg *master.Config) {
		cfg.OperatorToken = "op"
	}})
	c.WaitForLeader()
	var addrs []string
	for _, m := range c.Masters() {
		addrs = append(addrs, m.HTTPAddr())
	}
	masters := "--masters=" + strings.Join(addrs, ",")
	unit := protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 64})
	fw := c.NewFramework(testcluster.FrameworkOptions{Role: "eng", Demand: []protocol.TaskShape{{Resources: unit, Count: 1000}}})
	agent := c.Agents()[0].ID()

	cli := operatorCLI{t: t, masters: masters}

	testutil.WaitFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if out := cli.run("status"); !strings.Contains(out, "frameworks  1: 1 connected") {
			return errors.New(out)
		}
		return nil
	})
	out := cli.run("status")
	for _, want := range []string{"leader      m", "agents      1: 1 active"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status %q lacks %q", out, want)
		}
	}
	if out := cli.run("agents", "list"); !strings.Contains(out, string(agent)) || !strings.Contains(out, "active") {
		t.Fatalf("agents list %q lacks the active agent %s", out, agent)
	}
	if out := cli.run("frameworks", "list"); !strings.Contains(out, string(fw.ID())) || !strings.Contains(out, "eng") {
		t.Fatalf("frameworks list %q lacks %s in eng", out, fw.ID())
	}
	out = cli.run("frameworks", "explain", string(fw.ID()))
	for _, want := range []string{`in role "eng": connected true`, "cpus 0.5, mem 64 MiB", "PENDING"} {
		if !strings.Contains(out, want) {
			t.Fatalf("explain %q lacks %q", out, want)
		}
	}
	cli.fails("404 Not Found", "frameworks", "explain", "fw-NOSUCH")

	checkDrainCommands(cli, fw.ID(), agent)
	checkRoleCommands(cli)
	if out := cli.run("operator", "raft", "list-peers"); strings.Count(out, "\n") != 4 || strings.Count(out, "true") != 1 {
		t.Fatalf("operator raft list-peers: %q, want three members, one the leader", out)
	}
	if err := fw.RegisterCoflow("shuffle-1", protocol.FlowSpec{Src: agent, Dst: agent, Transfers: 3}); err != nil {
		t.Fatal(err)
	}
	if out := cli.run("coflows", "list"); !strings.Contains(out, string(fw.ID())+"  shuffle-1  thin") || !strings.Contains(out, "1/1") {
		t.Fatalf("coflows list: %q, want shuffle-1, thin, with its one flow left", out)
	}
	for _, cmd := range [][]string{{"tasks", "list"}, {"offers", "list"}} {
		if out := cli.run(cmd...); !strings.Contains(out, "FRAMEWORK") {
			t.Fatalf("allot %s: %q lacks its header", strings.Join(cmd, " "), out)
		}
	}
	snap := filepath.Join(t.TempDir(), "allot.snap")
	if out := cli.run("operator", "snapshot", "save", snap, "--token=op"); !strings.HasPrefix(out, "saved ") {
		t.Fatalf("snapshot save: %q", out)
	}
	if out := cli.run("operator", "snapshot", "restore", snap, "--token=op"); !strings.HasPrefix(out, "restored the state as of Raft index ") {
		t.Fatalf("snapshot restore: %q", out)
	}
	_, errOut, code := runAllot(t, "", "status", "--masters=127.0.0.1:1", "--timeout=2s")
	if code == 0 || !strings.Contains(errOut, "connection refused") {
		t.Fatalf("status with no master up: exit %d, %q", code, errOut)
	}
}

// operatorCLI runs allot's commands against the masters of a test, as
// --masters names them.
type operatorCLI struct {
	t       *testing.T
	masters string
}

// run runs allot with args and returns its output, failing the test unless
// it exits 0.
func (c operatorCLI) run(args ...string) string {
	c.t.Helper()
	out, errOut, code := runAllot(c.t, "", append(args, c.masters)...)
	if code != 0 {
		c.t.Fatalf("allot %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// fails runs allot with args, failing the test unless it fails with one
// line on stderr that contains want.
func (c operatorCLI) fails(want string, args ...string) {
	c.t.Helper()
	_, errOut, code := runAllot(c.t, "", append(args, c.masters)...)
	if code == 0 || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		c.t.Fatalf("allot %s: exit %d, stderr %q; want a one-line failure containing %q", strings.Join(args, " "), code, errOut, want)
	}
}

// checkDrainCommands drains and activates agent, the one agent of the
// cluster, by its ID, hostname and an ID prefix, and checks that
// framework fw's explanation sees it drained.
func checkDrainCommands(cli operatorCLI, fw protocol.FrameworkID, agent protocol.AgentID) {
	cli.t.Helper()
	cli.fails("needs the operator token", "agents", "drain", string(agent))
	if out := cli.run("agents", "drain", string(agent), "--token=op"); out != "agent "+string(agent)+" is draining\n" {
		cli.t.Fatalf("drain: %q", out)
	}
	// A leader elected meanwhile knows the agent once it re-registers.
	testutil.WaitFor(cli.t, 10*time.Second, 50*time.Millisecond, func() error {
		var ex api.Explanation
		if err := json.Unmarshal([]byte(cli.run("frameworks", "explain", string(fw), "--json")), &ex); err != nil {
			return err
		}
		if len(ex.Shapes) != 1 || ex.Shapes[0].Agents.Draining != 1 {
			return fmt.Errorf("explain --json after the drain: %+v, want the one agent draining", ex.Shapes)
		}
		return nil
	})
	if out := cli.run("agents", "activate", string(agent), "--token=op"); !strings.HasSuffix(out, "is active\n") {
		cli.t.Fatalf("activate: %q", out)
	}
	// An agent is named by its hostname or a unique prefix of its ID too.
	var agents []api.Agent
	if err := json.Unmarshal([]byte(cli.run("agents", "list", "--json")), &agents); err != nil || len(agents) != 1 {
		cli.t.Fatalf("agents list --json: %v %v", agents, err)
	}
	if out := cli.run("agents", "drain", agents[0].Hostname, "--token=op"); out != "agent "+string(agent)+" is draining\n" {
		cli.t.Fatalf("drain by hostname %s: %q", agents[0].Hostname, out)
	}
	if out := cli.run("agents", "activate", string(agent)[:len(agent)-3], "--token=op"); out != "agent "+string(agent)+" is active\n" {
		cli.t.Fatalf("activate by an ID prefix: %q", out)
	}
	cli.fails("no agent has the ID", "agents", "drain", "no-such-host", "--token=op")
}

// checkRoleCommands sets, updates and lists roles under eng, with their
// warnings and one-line failures.
func checkRoleCommands(cli operatorCLI) {
	cli.t.Helper()
	if out := cli.run("roles", "set", "eng", "--weight=2", "--guarantee=cpus=500", "--limit=cpus=1000,mem=512", "--offer-constraint=rack in r1,r2", "--token=op"); out != "role eng: weight 2, guarantee cpus 0.5, limit cpus 1, mem 512 MiB, offer constraints rack in [r1 r2], preemption inherited\n" {
		cli.t.Fatalf("roles set: %q", out)
	}
	// A partial update keeps what it does not name.
	if out := cli.run("roles", "set", "eng", "--weight=3", "--token=op"); out != "role eng: weight 3, guarantee cpus 0.5, limit cpus 1, mem 512 MiB, offer constraints rack in [r1 r2], preemption inherited\n" {
		cli.t.Fatalf("roles set --weight alone: %q, want the guarantee, limit and offer constraints kept", out)
	}
	if out := cli.run("roles", "set", "eng", "--weight=2", "--token=op"); !strings.HasPrefix(out, "role eng: weight 2, guarantee cpus 0.5") {
		cli.t.Fatalf("roles set --weight=2: %q", out)
	}
	// A guarantee beyond the cluster is set, with a warning.
	bigOut, errOut, code := runAllot(cli.t, "", "roles", "set", "eng/big", "--guarantee=cpus=99999000", "--token=op", cli.masters)
	if code != 0 || !strings.Contains(bigOut, "guarantee cpus 99999") || !strings.Contains(errOut, "warning: role eng/big: guarantee cpus 99999000 exceeds") {
		cli.t.Fatalf("roles set beyond the cluster: exit %d, stdout %q, stderr %q; want it set with a warning", code, bigOut, errOut)
	}
	if out := cli.run("roles", "set", "eng/big", "--guarantee=", "--token=op"); !strings.Contains(out, "guarantee none") {
		cli.t.Fatalf("roles set --guarantee= (empty): %q, want the guarantee removed", out)
	}
	if out := cli.run("roles", "set", "eng/batch", "--preemption=off", "--token=op"); !strings.HasSuffix(out, ", preemption off\n") {
		cli.t.Fatalf("roles set --preemption: %q", out)
	}
	cli.fails("preemption policy", "roles", "set", "eng/batch", "--preemption=sometimes", "--token=op")
	cli.fails("want name=amount pairs", "roles", "set", "eng", "--limit=cpus", "--token=op")
	cli.fails("no operator", "roles", "set", "eng", "--offer-constraint=rack", "--token=op")
	var roles []api.Role
	if err := json.Unmarshal([]byte(cli.run("roles", "list", "--json")), &roles); err != nil {
		cli.t.Fatal(err)
	}
	if len(roles) != 3 || roles[0].Path != "eng" || roles[0].Weight != 2 || roles[0].Limit == nil || roles[0].Guarantee == nil || len(roles[0].OfferConstraints) != 1 ||
		roles[1].Path != "eng/batch" || roles[1].Preemption != "off" || roles[2].Path != "eng/big" {
		cli.t.Fatalf("roles list --json: %+v, want eng with weight 2, a guarantee, a limit and an offer constraint, eng/batch with preemption off, and eng/big", roles)
	}
}

// After the leader is killed, allot status names the leader that served
// the state it shows, never the dead one a follower may still believe in.
func TestStatus_namesTheLeaderThatServedIt(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	c.WaitForLeader()
	masters := "--masters=" + strings.Join(c.HTTPAddrs(), ",")
	dead := c.NodeID(c.KillLeader())
	testutil.WaitFor(t, 15*time.Second, 20*time.Millisecond, func() error {
		out, errOut, code := runAllot(t, "", "status", masters, "--timeout=2s")
		if code != 0 {
			return fmt.Errorf("status: exit %d: %s", code, errOut)
		}
		first, _, _ := strings.Cut(out, "\n")
		if strings.Contains(first, dead) {
			t.Fatalf("status after the leader %s was killed: %q names it as leader", dead, first)
		}
		leader := c.Leader()
		if leader == nil || !strings.HasPrefix(first, "leader      "+leader.ID()+" ") {
			return fmt.Errorf("status %q, leader now %v", first, leader)
		}
		return nil
	})
}
