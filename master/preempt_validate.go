package master

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// checkNonPreemptible refuses an accept whose non-preemptible tasks its
// role's guarantee does not cover: such a task must run under a role (its
// framework's or an ancestor) with a guarantee, and the non-preemptible
// tasks under the nearest such role, these included, must fit in that
// guarantee in every resource it names (and use one of them). That they
// run on fair offers, not revocable ones, the allocator's Launch checks.
func (l *leader) checkNonPreemptible(fw protocol.FrameworkID, tasks []protocol.TaskInfo) error {
	var pinned []protocol.TaskInfo
	for _, t := range tasks {
		if t.NonPreemptible {
			pinned = append(pinned, t)
		}
	}
	if len(pinned) == 0 {
		return nil
	}
	v := l.view()
	f, ok := v.Framework(fw)
	if !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, fw)
	}
	role, guar := guaranteedRole(v, f.Role)
	if role == "" {
		return fmt.Errorf("%w: task %s: role %q has no guarantee to hold a non-preemptible task",
			protocol.ErrNotPreemptible, pinned[0].TaskID, f.Role)
	}
	sum := map[string]int64{}
	for _, t := range v.Tasks() {
		if t.Terminal() || !t.Info.NonPreemptible {
			continue
		}
		if owner, ok := v.Framework(t.FrameworkID); ok && underRole(owner.Role, role) {
			for name, x := range t.Info.Resources.Scalars {
				sum[name] += x
			}
		}
	}
	for _, t := range pinned {
		uses := false
		for name, x := range t.Resources.Scalars {
			if g, named := guar.Scalars[name]; named {
				uses = uses || x > 0
				sum[name] += x
				if sum[name] > g {
					return fmt.Errorf("%w: task %s: non-preemptible tasks under role %q would hold %d %s, beyond its guarantee of %d",
						protocol.ErrNotPreemptible, t.TaskID, role, sum[name], name, g)
				}
			}
		}
		if !uses {
			return fmt.Errorf("%w: task %s uses none of the resources role %q's guarantee names",
				protocol.ErrNotPreemptible, t.TaskID, role)
		}
	}
	return nil
}

// guaranteedRole is the nearest role at or above path with a guarantee,
// and that guarantee; "" when none has one.
func guaranteedRole(v *state.View, path string) (string, protocol.Resources) {
	for p := path; p != ""; p = parentRole(p) {
		if r, ok := v.Role(p); ok && r.Quota != nil && len(r.Quota.Guarantee.Scalars) > 0 {
			return p, r.Quota.Guarantee
		}
	}
	return "", protocol.Resources{}
}

func parentRole(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// underRole reports whether role path lies at or under role r.
func underRole(path, r string) bool {
	return path == r || strings.HasPrefix(path, r+"/")
}
