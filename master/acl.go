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
	acls := l.m.cfg.RoleACLs
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
