package master

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// stateCollector reports gauges of the replicated state at every scrape,
// the counterparts of Mesos's master/* gauges: frameworks by connection,
// suppressed frameworks, agents and tasks by state, what each role's
// frameworks hold, and (on the leader) the outstanding offers and the
// coflows it schedules.
type stateCollector struct {
	view        func() *state.View // nil before the master started
	outstanding func() (int, bool) // the leader's outstanding offers; false on a follower
	// coflows returns the leader's registered and completed coflows;
	// false on a follower.
	coflows func() (int, uint64, bool)
	// shares returns the leader's role tree, and fair each declared
	// framework's fair share; false on a follower.
	shares func() ([]offers.NodeShare, bool)
	fair   func() (map[protocol.FrameworkID]protocol.Resources, bool)

	frameworks, suppressed, agents, tasks, roleAllocated, offers *prometheus.Desc
	coflowsActive, coflowsCompleted, cluster                     *prometheus.Desc
	roleShare, roleDemanding, revocable, roleFair                *prometheus.Desc
}

func newStateCollector(view func() *state.View, outstanding func() (int, bool), coflows func() (int, uint64, bool),
	shares func() ([]offers.NodeShare, bool), fair func() (map[protocol.FrameworkID]protocol.Resources, bool)) *stateCollector {
	return &stateCollector{
		view: view, outstanding: outstanding, coflows: coflows, shares: shares, fair: fair,
		roleFair: prometheus.NewDesc("allot_role_fair_share",
			"Each role's H-DRF fair share of the cluster, as a quantity: what its frameworks get when every one asks for all the work it described (leader only; milli-CPUs, MiB, ...).",
			[]string{"role", "resource"}, nil),
		roleShare: prometheus.NewDesc("allot_role_dominant_share",
			"Each role's dominant share, the one H-DRF orders siblings by, of what it runs and holds in offers (leader only).", []string{"role"}, nil),
		roleDemanding: prometheus.NewDesc("allot_role_demanding",
			"1 while frameworks under the role declare demand not yet met (leader only).", []string{"role"}, nil),
		coflowsActive: prometheus.NewDesc("allot_coflows", "Coflows registered with the leader and not finished (leader only).", nil, nil),
		coflowsCompleted: prometheus.NewDesc("allot_coflows_completed",
			"Coflows whose flows all finished since this master was elected (leader only).", nil, nil),
		frameworks: prometheus.NewDesc("allot_frameworks", "Registered frameworks, by connection.", []string{"connection"}, nil),
		suppressed: prometheus.NewDesc("allot_frameworks_suppressed", "Frameworks that want no offers.", nil, nil),
		agents:     prometheus.NewDesc("allot_agents", "Agents, by state.", []string{"state"}, nil),
		tasks:      prometheus.NewDesc("allot_tasks", "Tasks in the task table, by state.", []string{"state"}, nil),
		roleAllocated: prometheus.NewDesc("allot_role_allocated",
			"Scalar resources held by the tasks that are not terminal of each role's frameworks (milli-CPUs, MiB, ...).",
			[]string{"role", "resource"}, nil),
		offers: prometheus.NewDesc("allot_offers_outstanding", "Offers made and not yet used, declined or rescinded (leader only).", nil, nil),
		revocable: prometheus.NewDesc("allot_revocable_resources",
			"Scalar resources held by the tasks that are not terminal launched on leftover offers: the leftover pool in use, which the master revokes when its lenders want it back (milli-CPUs, MiB, ...).",
			[]string{"resource"}, nil),
		cluster: prometheus.NewDesc("allot_cluster_resources",
			"Scalar resources of the active and draining agents: their total, what tasks that are not terminal hold (used), and the rest (free); milli-CPUs, MiB, ...",
			[]string{"resource", "kind"}, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.frameworks, c.suppressed, c.agents, c.tasks, c.roleAllocated, c.offers,
		c.coflowsActive, c.coflowsCompleted, c.cluster, c.roleShare, c.roleDemanding, c.revocable, c.roleFair} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	c.collectLeader(ch)
	v := c.view()
	if v == nil {
		return
	}
	roleOf := c.collectFrameworks(ch, v)
	total, counted := c.collectAgents(ch, v)
	c.collectTasks(ch, v, roleOf, total, counted)
	if fair, ok := c.fair(); ok {
		// Every role with frameworks has a series per resource, zero
		// when its frameworks declare nothing.
		for role, share := range roleFairShares(fair, roleOf) {
			for name := range total {
				ch <- prometheus.MustNewConstMetric(c.roleFair, prometheus.GaugeValue, float64(share.Scalar(name)), role, name)
			}
		}
	}
}

// collectLeader reports the gauges only the leader knows: its outstanding
// offers, its roles' shares and its coflows.
func (c *stateCollector) collectLeader(ch chan<- prometheus.Metric) {
	if n, ok := c.outstanding(); ok {
		ch <- prometheus.MustNewConstMetric(c.offers, prometheus.GaugeValue, float64(n))
	}
	if shares, ok := c.shares(); ok {
		for _, n := range shares {
			if n.Framework || n.Path == "" {
				continue
			}
			demanding := 0.0
			if n.Demanding {
				demanding = 1
			}
			ch <- prometheus.MustNewConstMetric(c.roleShare, prometheus.GaugeValue, n.DominantShare, n.Path)
			ch <- prometheus.MustNewConstMetric(c.roleDemanding, prometheus.GaugeValue, demanding, n.Path)
		}
	}
	if active, completed, ok := c.coflows(); ok {
		ch <- prometheus.MustNewConstMetric(c.coflowsActive, prometheus.GaugeValue, float64(active))
		ch <- prometheus.MustNewConstMetric(c.coflowsCompleted, prometheus.GaugeValue, float64(completed))
	}
}

// collectFrameworks reports the frameworks by connection and the
// suppressed ones; it returns each framework's role.
func (c *stateCollector) collectFrameworks(ch chan<- prometheus.Metric, v *state.View) map[protocol.FrameworkID]string {
	connected, disconnected, suppressed := 0, 0, 0
	roleOf := map[protocol.FrameworkID]string{}
	for _, f := range v.Frameworks() {
		if f.Connected {
			connected++
		} else {
			disconnected++
		}
		if f.Suppressed {
			suppressed++
		}
		roleOf[f.ID] = f.Role
	}
	ch <- prometheus.MustNewConstMetric(c.frameworks, prometheus.GaugeValue, float64(connected), "connected")
	ch <- prometheus.MustNewConstMetric(c.frameworks, prometheus.GaugeValue, float64(disconnected), "disconnected")
	ch <- prometheus.MustNewConstMetric(c.suppressed, prometheus.GaugeValue, float64(suppressed))
	return roleOf
}

// collectAgents reports the agents by state; it returns the scalar
// resources of the active and draining agents, and which agents those are.
func (c *stateCollector) collectAgents(ch chan<- prometheus.Metric, v *state.View) (total map[string]int64, counted map[string]bool) {
	agents := map[string]int{}
	total, counted = map[string]int64{}, map[string]bool{}
	for _, a := range v.Agents() {
		agents[string(a.State)]++
		if a.State == state.AgentActive || a.State == state.AgentDraining {
			counted[string(a.ID)] = true
			for name, x := range a.Resources.Scalars {
				total[name] += x
			}
		}
	}
	for st, n := range agents {
		ch <- prometheus.MustNewConstMetric(c.agents, prometheus.GaugeValue, float64(n), st)
	}
	return total, counted
}

// collectTasks reports the tasks by state, the cluster's resources total,
// used and free, the revocable resources in use, and what each role's
// frameworks hold.
func (c *stateCollector) collectTasks(ch chan<- prometheus.Metric, v *state.View, roleOf map[protocol.FrameworkID]string,
	total map[string]int64, counted map[string]bool) {
	used, lent := map[string]int64{}, map[string]int64{}
	// Every task state and every role with frameworks has a series, zero
	// when nothing is there, so that dashboards and alerts see an empty
	// state or a role holding nothing.
	tasks := map[string]int{}
	for _, st := range protocol.TaskStates() {
		tasks[string(st)] = 0
	}
	held := map[[2]string]int64{}
	for _, role := range roleOf {
		for name := range total {
			held[[2]string{role, name}] += 0
		}
	}
	for _, t := range v.Tasks() {
		tasks[string(t.State)]++
		if t.Terminal() {
			continue
		}
		role := roleOf[t.FrameworkID]
		revocable := t.Kind == protocol.OfferKind(offers.KindLeftover)
		for name, x := range t.Info.Resources.Scalars {
			held[[2]string{role, name}] += x
			if revocable {
				lent[name] += x
			}
			if counted[string(t.AgentID)] {
				used[name] += x
			}
		}
	}
	for name, x := range total {
		ch <- prometheus.MustNewConstMetric(c.cluster, prometheus.GaugeValue, float64(x), name, "total")
		ch <- prometheus.MustNewConstMetric(c.cluster, prometheus.GaugeValue, float64(used[name]), name, "used")
		ch <- prometheus.MustNewConstMetric(c.cluster, prometheus.GaugeValue, float64(x-used[name]), name, "free")
		ch <- prometheus.MustNewConstMetric(c.revocable, prometheus.GaugeValue, float64(lent[name]), name)
	}
	for st, n := range tasks {
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(n), st)
	}
	for k, x := range held {
		ch <- prometheus.MustNewConstMetric(c.roleAllocated, prometheus.GaugeValue, float64(x), k[0], k[1])
	}
}
