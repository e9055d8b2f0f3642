package executor

import "github.com/prometheus/client_golang/prometheus"

// gcCollector is the part of the agent's metrics the sandbox collector's
// latest pass and counters give (docs/metrics.md).
type gcCollector struct {
	fs, sandboxes, bytes, removed, failed, stuck *prometheus.Desc
}

func newGCCollector() gcCollector {
	return gcCollector{
		fs: prometheus.NewDesc("allot_agent_workdir_fs_bytes",
			"The work directory's file system: its size (total) and what is free to unprivileged users (free), at the latest sandbox collection.",
			[]string{"kind"}, nil),
		sandboxes: prometheus.NewDesc("allot_agent_sandboxes", "Sandboxes on disk, of running and ended tasks.", nil, nil),
		bytes: prometheus.NewDesc("allot_agent_sandboxes_bytes",
			"Bytes the sandboxes take on disk together (their blocks, as du counts them).", nil, nil),
		removed: prometheus.NewDesc("allot_agent_sandboxes_removed_total",
			"Sandboxes of ended tasks removed: past their delay (delay), or early, of frameworks gone, for the disk (pressure).",
			[]string{"reason"}, nil),
		failed: prometheus.NewDesc("allot_agent_sandbox_removal_failures_total",
			"Sandbox removals that failed (tried again at the next collection).", nil, nil),
		stuck: prometheus.NewDesc("allot_agent_sandbox_gc_stuck_total",
			"Collections that left the disk over its threshold or the sandboxes over their budget, with nothing more they may remove: the rest runs, or belongs to frameworks that may still read it within its delay.",
			nil, nil),
	}
}

func (c gcCollector) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.fs, c.sandboxes, c.bytes, c.removed, c.failed, c.stuck} {
		ch <- d
	}
}

func (c gcCollector) collect(ch chan<- prometheus.Metric, s gcStats) {
	ch <- prometheus.MustNewConstMetric(c.fs, prometheus.GaugeValue, float64(s.disk.Total), "total")
	ch <- prometheus.MustNewConstMetric(c.fs, prometheus.GaugeValue, float64(s.disk.Avail), "free")
	ch <- prometheus.MustNewConstMetric(c.sandboxes, prometheus.GaugeValue, float64(s.sandboxes))
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(s.bytes))
	for reason, n := range s.removed {
		ch <- prometheus.MustNewConstMetric(c.removed, prometheus.CounterValue, float64(n), reason)
	}
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(s.failed))
	ch <- prometheus.MustNewConstMetric(c.stuck, prometheus.CounterValue, float64(s.stuck))
}
