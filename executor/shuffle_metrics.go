package executor

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// shuffleCounters are what the shuffle transfers did, for the metrics.
type shuffleCounters struct {
	sent     atomic.Int64 // body bytes written to clients
	paced    atomic.Int64 // bytes the egress pacer granted
	waitedNs atomic.Int64 // time transfers waited for the ports
	// ingressRefused counts bad requests to the agent's ingress.
	ingressRefused atomic.Int64
}

// shuffleCollector is the part of the agent's metrics the shuffle server
// gives (docs/metrics.md).
type shuffleCollector struct {
	sent, paced, waited                  *prometheus.Desc
	ingressGranted, ingressRefused, asks *prometheus.Desc
}

func newShuffleCollector() shuffleCollector {
	return shuffleCollector{
		sent: prometheus.NewDesc("allot_agent_shuffle_sent_bytes_total",
			"Bytes the agent's shuffle transfers (downloads naming a coflow) sent.", nil, nil),
		paced: prometheus.NewDesc("allot_agent_shuffle_paced_bytes_total",
			"Bytes the shuffle egress port (--shuffle-egress) granted; 0 when it is unlimited.", nil, nil),
		waited: prometheus.NewDesc("allot_agent_shuffle_pace_wait_seconds_total",
			"Time the shuffle transfers spent waiting for the ports (the receivers' ingress, then the egress), summed over transfers.", nil, nil),
		ingressGranted: prometheus.NewDesc("allot_agent_shuffle_ingress_granted_bytes_total",
			"Bytes the shuffle ingress port (--shuffle-ingress) granted to senders; 0 when it is unlimited.", nil, nil),
		ingressRefused: prometheus.NewDesc("allot_agent_shuffle_ingress_refused_total",
			"Requests to the shuffle ingress refused as malformed or misaddressed.", nil, nil),
		asks: prometheus.NewDesc("allot_agent_shuffle_ingress_unanswered_total",
			"Chunks sent unpaced because the receiver's ingress did not grant them (gone, slow or refusing).", nil, nil),
	}
}

func (c shuffleCollector) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.sent, c.paced, c.waited, c.ingressGranted, c.ingressRefused, c.asks} {
		ch <- d
	}
}

func (c shuffleCollector) collect(ch chan<- prometheus.Metric, sh *shuffleServer) {
	s := &sh.counters
	var granted int64
	if sh.ingress != nil {
		granted = sh.ingress.granted.Load()
	}
	ch <- prometheus.MustNewConstMetric(c.ingressGranted, prometheus.CounterValue, float64(granted))
	ch <- prometheus.MustNewConstMetric(c.ingressRefused, prometheus.CounterValue, float64(s.ingressRefused.Load()))
	ch <- prometheus.MustNewConstMetric(c.asks, prometheus.CounterValue, float64(sh.asker.failed.Load()))
	ch <- prometheus.MustNewConstMetric(c.sent, prometheus.CounterValue, float64(s.sent.Load()))
	ch <- prometheus.MustNewConstMetric(c.paced, prometheus.CounterValue, float64(s.paced.Load()))
	ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, float64(s.waitedNs.Load())/1e9)
}
