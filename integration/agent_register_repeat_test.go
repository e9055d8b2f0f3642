package integration

import (
	"context"
	"errors"
	"testing"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// TestRegister_repeated: an agent whose registration committed but whose
// answer it never got registers again with the same hostname and
// resources, and is answered with the agent it registered, not refused by
// its credential's cap of one agent nor registered twice; a registration
// of another hostname under the same credential is still refused.
func TestRegister_repeated(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1, Authenticate: true})
	principal, _ := c.NextAgentCredential()
	nc := c.ConnectAs(protocol.Identity{Kind: protocol.KindAgent, Name: principal})
	subject, err := c.Subjects().APIAgent(principal, "", protocol.VerbRegister)
	if err != nil {
		t.Fatal(err)
	}
	register := func(host string) (protocol.RegisterReply, error) {
		var reply protocol.RegisterReply
		err := testcluster.Request(context.Background(), nc, testcluster.DefaultRequestTimeout, subject,
			protocol.MsgRegisterRequest, protocol.RegisterRequest{Hostname: host, Resources: agentResources(4)}, &reply)
		return reply, err
	}
	first, err := register("repeat")
	if err != nil {
		t.Fatal(err)
	}
	again, err := register("repeat")
	if err != nil {
		t.Fatalf("the same registration again: %v", err)
	}
	if again.AgentID != first.AgentID {
		t.Fatalf("the same registration again got agent %s, want %s", again.AgentID, first.AgentID)
	}
	if _, err := register("other"); !errors.Is(err, protocol.ErrLimitExceeded) {
		t.Fatalf("a second hostname under the credential: %v, want ErrLimitExceeded", err)
	}
	n := 0
	for _, a := range c.WaitForLeader().View().Agents() {
		if a.Hostname == "repeat" || a.Hostname == "other" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d agents registered, want 1", n)
	}
}
