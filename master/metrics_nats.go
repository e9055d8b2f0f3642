package master

import (
	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
)

// natsCollector reports the embedded NATS server's own counts at every
// scrape, read from the server rather than from its monitoring port
// (which the master does not open): clients and subscriptions now, and
// since the server started the messages and bytes it moved and the slow
// consumers it cut off. A master on external NATS reports none of these.
type natsCollector struct {
	srv func() *server.Server // nil when NATS is external or not started

	connections, subscriptions, slowConsumers, messages, bytes *prometheus.Desc
}

func newNATSCollector(srv func() *server.Server) *natsCollector {
	return &natsCollector{
		srv:         srv,
		connections: prometheus.NewDesc("allot_nats_connections", "Clients connected to this master's embedded NATS server.", nil, nil),
		subscriptions: prometheus.NewDesc("allot_nats_subscriptions",
			"Subscriptions held on this master's embedded NATS server.", nil, nil),
		slowConsumers: prometheus.NewDesc("allot_nats_slow_consumers_total",
			"Clients the embedded NATS server cut off for reading too slowly.", nil, nil),
		messages: prometheus.NewDesc("allot_nats_messages_total",
			"Messages the embedded NATS server received (in) and sent (out), routes between masters included.", []string{"direction"}, nil),
		bytes: prometheus.NewDesc("allot_nats_bytes_total",
			"Payload bytes the embedded NATS server received (in) and sent (out).", []string{"direction"}, nil),
	}
}

func (c *natsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.connections, c.subscriptions, c.slowConsumers, c.messages, c.bytes} {
		ch <- d
	}
}

func (c *natsCollector) Collect(ch chan<- prometheus.Metric) {
	srv := c.srv()
	if srv == nil {
		return
	}
	v, err := srv.Varz(nil)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.connections, prometheus.GaugeValue, float64(v.Connections))
	ch <- prometheus.MustNewConstMetric(c.subscriptions, prometheus.GaugeValue, float64(v.Subscriptions))
	ch <- prometheus.MustNewConstMetric(c.slowConsumers, prometheus.CounterValue, float64(v.SlowConsumers))
	ch <- prometheus.MustNewConstMetric(c.messages, prometheus.CounterValue, float64(v.InMsgs), "in")
	ch <- prometheus.MustNewConstMetric(c.messages, prometheus.CounterValue, float64(v.OutMsgs), "out")
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(v.InBytes), "in")
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(v.OutBytes), "out")
}
