package master

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// Role authorization (Config.RoleACLs): which principal may subscribe a
// framework into which role, as Mesos's register_frameworks ACL and role
// whitelist do. A pattern is a role path ("eng/prod": that role only), a
// path ending in "/*" ("eng/*": every role under eng, not eng itself), or
// "*" (any role).

// roleAllowed reports whether pattern admits role.
func roleAllowed(pattern, role string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasSuffix(pattern, "/*"):
		return strings.HasPrefix(role, strings.TrimSuffix(pattern, "*"))
	}
	return pattern == role
}

// validRolePattern reports whether pattern is "*", a role path, or a role
// path followed by "/*".
func validRolePattern(pattern string) bool {
	if pattern == "*" {
		return true
	}
	return protocol.ValidRole(strings.TrimSuffix(pattern, "/*"))
}

// authorizeRole refuses a subscribe into a role its principal may not use,
// when role ACLs are configured.
func (l *leader) authorizeRole(r *protocol.SubscribeRequest) error {
	acls := l.cfg.RoleACLs
	if acls == nil {
		return nil
	}
	for _, p := range acls[r.Principal] {
		if roleAllowed(p, r.Role) {
			return nil
		}
	}
	return fmt.Errorf("%w: principal %q may not subscribe into role %q", protocol.ErrUnauthorized,
		clipText(r.Principal), clipText(r.Role))
}

// runAs settles the user each task runs as (its own, else its framework's,
// else "" for the agent's default task user) and refuses the launch when
// the framework's principal may not run tasks as that user (Config.RunAsACLs,
// Mesos's run_tasks ACL).
func (l *leader) runAs(id protocol.FrameworkID, tasks []protocol.TaskInfo) error {
	f, ok := l.view().Framework(id)
	if !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, id)
	}
	for i := range tasks {
		u := tasks[i].Command.User
		if u == "" {
			u = f.User
		}
		if !l.cfg.mayRunAs(f.Principal, u) {
			return fmt.Errorf("%w: principal %q may not run tasks as user %q (task %s)", protocol.ErrUnauthorized,
				protocol.PrincipalToken(f.Principal), u, tasks[i].TaskID)
		}
		tasks[i].Command.User = u
	}
	return nil
}

// mayRunAs reports whether principal may run tasks as user: always for the
// agents' default task user (""), and without run-as ACLs; otherwise when
// the principal's list names the user or "*".
func (c Config) mayRunAs(principal, user string) bool {
	if user == "" || c.RunAsACLs == nil {
		return true
	}
	for _, u := range c.RunAsACLs[principal] {
		if u == "*" || u == user {
			return true
		}
	}
	return false
}
