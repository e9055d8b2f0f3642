package executor

import (
	"net/http"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/allot-project/allot/protocol"
)

// agentCollector reports, at every scrape, the agent's view of itself:
// whether it is registered, its resources in all and in use, its tasks by
// state, the status updates the master has not acknowledged, its disk as
// the sandbox collector last saw it (gcCollector), and what its shuffle
// transfers sent (shuffleCollector).
type agentCollector struct {
	a                                     *Agent
	registered, resources, tasks, unacked *prometheus.Desc
	gc                                    gcCollector
	shuffle                               shuffleCollector
}

func (c *agentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.registered, c.resources, c.tasks, c.unacked} {
		ch <- d
	}
	c.gc.describe(ch)
	c.shuffle.describe(ch)
}

func (c *agentCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.a.State()
	registered := 0.0
	if s.Registered {
		registered = 1
	}
	ch <- prometheus.MustNewConstMetric(c.registered, prometheus.GaugeValue, registered)
	for name, x := range s.Resources.Scalars {
		ch <- prometheus.MustNewConstMetric(c.resources, prometheus.GaugeValue, float64(x), name, "total")
		ch <- prometheus.MustNewConstMetric(c.resources, prometheus.GaugeValue, float64(s.Used.Scalars[name]), name, "used")
	}
	// Every state has a series, zero when no task is in it.
	byState := map[string]int{}
	for _, st := range protocol.TaskStates() {
		byState[string(st)] = 0
	}
	unacked := 0
	for _, t := range s.Tasks {
		byState[string(t.State)]++
		unacked += t.PendingUpdates
	}
	for st, n := range byState {
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(n), st)
	}
	ch <- prometheus.MustNewConstMetric(c.unacked, prometheus.GaugeValue, float64(unacked))
	c.gc.collect(ch, c.a.gc.snapshot())
	c.shuffle.collect(ch, c.a.shuffle)
}

// metricsHandler serves the agent's metrics in the Prometheus text format,
// from a registry of its own (several agents may share a process).
func (a *Agent) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "allot_build_info",
		Help:        "1, labelled with the version allot was built as and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": protocol.BuildVersion(), "go_version": runtime.Version()},
	})
	build.Set(1)
	reg.MustRegister(build, &agentCollector{a: a,
		registered: prometheus.NewDesc("allot_agent_registered", "1 while the agent is registered with the leader.", nil, nil),
		resources: prometheus.NewDesc("allot_agent_resources",
			"The agent's scalar resources: in all (total) and held by its tasks that are not terminal (used); milli-CPUs, MiB, ...",
			[]string{"resource", "kind"}, nil),
		tasks:   prometheus.NewDesc("allot_agent_tasks", "The agent's tasks, by state (recently ended ones included).", []string{"state"}, nil),
		unacked: prometheus.NewDesc("allot_agent_status_updates_unacked", "Status updates the master has not acknowledged yet.", nil, nil),
		gc:      newGCCollector(),
		shuffle: newShuffleCollector(),
	},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
