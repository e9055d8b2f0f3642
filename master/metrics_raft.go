package master

import (
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-project/allot/protocol"
)

// raftCollector reports this master's Raft health at every scrape: its
// term, the indexes it knows committed and has applied, how long since it
// heard from the leader, and whether it is ready (/readyz).
type raftCollector struct {
	m                                         *Master
	term, commit, applied, lastContact, ready *prometheus.Desc
}

func newRaftCollector(m *Master) *raftCollector {
	return &raftCollector{
		m:           m,
		term:        prometheus.NewDesc("allot_raft_term", "The Raft term this master is in.", nil, nil),
		commit:      prometheus.NewDesc("allot_raft_commit_index", "The last Raft log index this master knows committed.", nil, nil),
		applied:     prometheus.NewDesc("allot_raft_applied_index", "The last Raft log index this master applied to its state.", nil, nil),
		lastContact: prometheus.NewDesc("allot_raft_last_contact_seconds", "Seconds since this master last heard from the leader (0 on the leader).", nil, nil),
		ready:       prometheus.NewDesc("allot_ready", "1 while this master is ready (/readyz): part of a quorum and caught up.", nil, nil),
	}
}

func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.term, c.commit, c.applied, c.lastContact, c.ready} {
		ch <- d
	}
}

func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.m.node
	if n == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.term, prometheus.GaugeValue, float64(n.Term()))
	ch <- prometheus.MustNewConstMetric(c.commit, prometheus.GaugeValue, float64(n.CommitIndex()))
	ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(n.AppliedIndex()))
	if last := n.LastContact(); !last.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.lastContact, prometheus.GaugeValue, max(0, time.Since(last).Seconds()))
	}
	ready := 0.0
	if n.Ready() == "" {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, ready)
}

// buildInfo is allot_build_info: 1, labelled with the build's version and
// Go's, as Prometheus exporters do.
func buildInfo() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "allot_build_info",
		Help:        "1, labelled with the version allot was built as and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": protocol.BuildVersion(), "go_version": runtime.Version()},
	})
	g.Set(1)
	return g
}
