package master

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

func TestRoleAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, role string
		want          bool
	}{
		{"eng/prod", "eng/prod", true},
		{"eng/prod", "eng/prod2", false},
		{"eng/prod", "eng", false},
		{"eng/*", "eng/prod", true},
		{"eng/*", "eng/prod/web", true},
		{"eng/*", "eng", false},
		{"eng/*", "engineering/x", false},
		{"*", "anything/at/all", true},
	} {
		if got := roleAllowed(tc.pattern, tc.role); got != tc.want {
			t.Errorf("roleAllowed(%q, %q) = %v, want %v", tc.pattern, tc.role, got, tc.want)
		}
	}
	for p, want := range map[string]bool{"*": true, "eng": true, "eng/*": true, "eng/**": false, "": false, "/x": false} {
		if got := validRolePattern(p); got != want {
			t.Errorf("validRolePattern(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestRoleACLs: a principal subscribes only into the roles its ACL names;
// a resubscribe cannot move a framework into a role outside them; a
// principal the ACLs do not list may use no role.
func TestRoleACLs(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, func(c *Config) {
		c.RoleACLs = map[string][]string{"analytics": {"eng/batch", "research/*"}, "ops": {"*"}}
	})
	subscribe := func(id protocol.FrameworkID, principal, role string) (protocol.SubscribeReply, error) {
		var reply protocol.SubscribeReply
		err := frameworkCall(t, nc, protocol.VerbSubscribe, nats.Header{},
			protocol.SubscribeRequest{FrameworkID: id, Name: "f", Principal: principal, Role: role}, &reply)
		return reply, err
	}
	for _, ok := range [][2]string{{"analytics", "eng/batch"}, {"analytics", "research/ml"}, {"ops", "eng/prod"}} {
		if _, err := subscribe("", ok[0], ok[1]); err != nil {
			t.Errorf("%s into %s: %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][2]string{{"analytics", "eng/prod"}, {"analytics", "research"}, {"nobody", "eng/batch"}, {"", "eng/batch"}} {
		if _, err := subscribe("", bad[0], bad[1]); !errors.Is(err, protocol.ErrUnauthorized) {
			t.Errorf("%q into %s: %v, want ErrUnauthorized", bad[0], bad[1], err)
		}
	}
	if n := len(m.View().Frameworks()); n != 3 {
		t.Fatalf("%d frameworks registered, want the 3 allowed", n)
	}
	fw, err := subscribe("", "analytics", "eng/batch")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := subscribe(fw.FrameworkID, "analytics", "eng/prod"); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Fatalf("resubscribe into a role outside the ACL: %v, want ErrUnauthorized", err)
	}
	if f, _ := m.View().Framework(fw.FrameworkID); f.Role != "eng/batch" {
		t.Fatalf("framework moved to %q by a refused resubscribe", f.Role)
	}
}
