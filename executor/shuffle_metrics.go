package executor

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// shuffleCounters are what the shuffle transfers did, for the metrics.
type shuffleCounters struct {
	sent     atomic.Int64 // body bytes written to clients
	paced    atomic.Int64 // bytes the egress pacer granted
	waitedNs atomic.Int64 // time transfers waited for the port
}

// shuffleCollector is the part of the agent's metrics the shuffle server
// gives (docs/metrics.md).
type shuffleCollector struct {
	sent, paced, waited *prometheus.Desc
}

func newShuffleCollector() shuffleCollector {
	return shuffleCollector{
		sent: prometheus.NewDesc("allot_agent_shuffle_sent_bytes_total",
			"Bytes the agent's shuffle transfers (downloads naming a coflow) sent.", nil, nil),
		paced: prometheus.NewDesc("allot_agent_shuffle_paced_bytes_total",
			"Bytes the shuffle egress port (--shuffle-egress) granted; 0 when it is unlimited.", nil, nil),
		waited: prometheus.NewDesc("allot_agent_shuffle_pace_wait_seconds_total",
			"Time the shuffle transfers spent waiting for the egress port, summed over transfers.", nil, nil),
	}
}

func (c shuffleCollector) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.sent, c.paced, c.waited} {
		ch <- d
	}
}

func (c shuffleCollector) collect(ch chan<- prometheus.Metric, s *shuffleCounters) {
	ch <- prometheus.MustNewConstMetric(c.sent, prometheus.CounterValue, float64(s.sent.Load()))
	ch <- prometheus.MustNewConstMetric(c.paced, prometheus.CounterValue, float64(s.paced.Load()))
	ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, float64(s.waitedNs.Load())/1e9)
}
