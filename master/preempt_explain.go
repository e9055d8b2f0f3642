package master

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/master/api"
)

// explainPreemption adds to an explanation the preemption needs that
// concern the framework (its own fair share, a guarantee of a role at or
// above its role), its warned tasks, and a reason in plain words when it
// waits for preemption.
func (l *leader) explainPreemption(ex *api.Explanation, now time.Time) {
	l.mu.Lock()
	needs := slices.Clone(l.preemption.needs)
	type warnedFor struct {
		n     int
		first time.Time
	}
	byNeed := map[string]warnedFor{}
	for k, w := range l.preemption.warned {
		x := byNeed[w.need]
		x.n++
		if x.first.IsZero() || w.deadline.Before(x.first) {
			x.first = w.deadline
		}
		byNeed[w.need] = x
		if k.FrameworkID == ex.FrameworkID {
			ex.Warned = append(ex.Warned, api.WarnedTask{TaskID: k.TaskID, Reason: w.reason, For: w.need,
				Deadline: *timeJSON(w.deadline)})
		}
	}
	l.mu.Unlock()
	slices.SortFunc(ex.Warned, func(a, b api.WarnedTask) int { return strings.Compare(string(a.TaskID), string(b.TaskID)) })
	for _, n := range needs {
		if n.Framework != ex.FrameworkID && (n.Framework != "" || !underRole(ex.Role, n.Role)) {
			continue
		}
		pn := api.PreemptionNeed{For: n.For, Policy: string(n.Policy), Short: n.Short,
			Since: *timeJSON(n.Since), EligibleAt: *timeJSON(n.EligibleAt), Covered: n.Covered, Blocked: n.Blocked}
		if w, ok := byNeed[n.For]; ok {
			pn.Warned, pn.KillAt = w.n, timeJSON(w.first)
		}
		ex.Preemption = append(ex.Preemption, pn)
		ex.Reasons = append(ex.Reasons, needReason(n.For, pn, byNeed[n.For].first, now))
	}
	if len(ex.Warned) > 0 {
		ex.Reasons = append(ex.Reasons, fmt.Sprintf("%d of its tasks are warned that they will be taken back (%s first, at %s)",
			len(ex.Warned), ex.Warned[0].Reason, ex.Warned[0].Deadline))
	}
}

// needReason says where a need stands.
func needReason(what string, n api.PreemptionNeed, killAt time.Time, now time.Time) string {
	eligible, _ := time.Parse(time.RFC3339Nano, n.EligibleAt)
	switch {
	case now.Before(eligible):
		return fmt.Sprintf("%s is short of %s (policy %s): tasks of others will be taken back from %s if it still is",
			what, n.Short, n.Policy, n.EligibleAt)
	case n.Warned > 0:
		return fmt.Sprintf("%s is waiting for preemption: %d tasks of others are warned and will be killed at %s",
			what, n.Warned, killAt.UTC().Format(time.RFC3339Nano))
	case n.Blocked:
		return fmt.Sprintf("%s is short of %s but nothing can be taken back for it under policy %s (no eligible tasks where its tasks fit)",
			what, n.Short, n.Policy)
	}
	return fmt.Sprintf("%s is short of %s; room is free for %d of its tasks", what, n.Short, n.Covered)
}
