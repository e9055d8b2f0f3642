package master

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/allot-project/allot/protocol"
)

// metrics are a master's Prometheus metrics. They live in a registry the
// Master owns, not in the global default one, so several masters in one
// process (tests, allot dev) keep separate counts. A nil *metrics records
// nothing, so code paths that run without a Master built by New stay safe.
type metrics struct {
	registry *prometheus.Registry

	rounds     prometheus.Counter
	roundTime  prometheus.Histogram
	offersMade prometheus.Counter
	declined   prometheus.Counter
	rescinded  prometheus.Counter
	raftApply  prometheus.Histogram
	requests   *prometheus.CounterVec
	held       prometheus.Gauge
	resent     prometheus.Counter
	relaunched prometheus.Counter
	warned     prometheus.Counter
	decisions  prometheus.Counter
	ended      *prometheus.CounterVec
	leadership prometheus.Counter
	toLaunch   prometheus.Histogram
}

// newMetrics registers the master's metrics; isLeader backs the
// allot_is_leader gauge and is called at every scrape, as are states and
// raft, which report the replicated state's gauges and Raft's health.
func newMetrics(isLeader func() bool, gauges ...prometheus.Collector) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		rounds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_allocation_rounds_total",
			Help: "Allocation rounds run by this master while it led.",
		}),
		roundTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "allot_allocation_round_seconds",
			Help:    "Time of one allocation round, from its start until its offers and rescinds are sent.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16), // 100µs .. ~3.3s
		}),
		offersMade: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_offers_made_total",
			Help: "Offers sent to frameworks.",
		}),
		declined: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_offers_declined_total",
			Help: "Offers frameworks declined (one per offer ID in a successful decline request).",
		}),
		rescinded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_offers_rescinded_total",
			Help: "Offers rescinded: expired, or their agent was lost or reregistered.",
		}),
		raftApply: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "allot_raft_apply_seconds",
			Help:    "Time to commit and apply one command through Raft, group commit included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18), // 100µs .. ~13s
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "allot_requests_total",
			Help: "API requests answered, by verb (kind.verb, or \"unknown\") and reply code (protocol.Code, 0 is ok).",
		}, []string{"verb", "code"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "allot_agent_removals_held",
			Help: "1 while more agents missed their heartbeats than the agent removal limit allows, so none is marked unreachable.",
		}),
		resent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_status_updates_resent_total",
			Help: "Status updates sent again to connected frameworks that had not acknowledged them in time.",
		}),
		relaunched: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_launches_resent_total",
			Help: "Launches sent again to agents that had reported nothing of the task in time.",
		}),
		decisions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_preemption_decisions_total",
			Help: "Preemption decisions the leader made (one per --preemption-interval, and at each warning's deadline).",
		}),
		warned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_tasks_preemption_warned_total",
			Help: "Tasks whose frameworks were warned that they would be preempted or revoked.",
		}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "allot_tasks_ended_total",
			Help: "Tasks that reached a terminal state while this master led, by state and reason (\"other\" for a reason allot does not define, \"none\" without one).",
		}, []string{"state", "reason"}),
		leadership: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "allot_leadership_changes_total",
			Help: "Times this master became or stopped being the leader.",
		}),
		toLaunch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "allot_offer_to_launch_seconds",
			Help:    "Time from the round that made an offer to the accept that launched tasks on it.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1ms .. ~33s
		}),
	}
	isLeaderGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "allot_is_leader",
		Help: "1 while this master serves as the leader, else 0.",
	}, func() float64 {
		if isLeader() {
			return 1
		}
		return 0
	})
	m.registry.MustRegister(
		m.rounds, m.roundTime, m.offersMade, m.declined, m.rescinded, m.raftApply, m.requests, m.held, m.resent, m.relaunched, m.warned, m.decisions,
		m.ended, m.leadership, m.toLaunch, isLeaderGauge, buildInfo(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.registry.MustRegister(gauges...)
	return m
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// round records one allocation round that took d.
func (m *metrics) round(d time.Duration) {
	if m == nil {
		return
	}
	m.rounds.Inc()
	m.roundTime.Observe(d.Seconds())
}

// offered records n offers about to be sent.
func (m *metrics) offered(n int) {
	if m == nil || n == 0 {
		return
	}
	m.offersMade.Add(float64(n))
}

// removalHeld records whether agent removals are held back.
func (m *metrics) removalHeld(held bool) {
	if m == nil {
		return
	}
	if held {
		m.held.Set(1)
	} else {
		m.held.Set(0)
	}
}

// statusesResent records n status updates sent again.
func (m *metrics) statusesResent(n int) {
	if m == nil {
		return
	}
	m.resent.Add(float64(n))
}

// launchesResent records n launches sent again.
func (m *metrics) launchesResent(n int) {
	if m == nil {
		return
	}
	m.relaunched.Add(float64(n))
}

// preempted records n tasks warned of preemption or revocation.
func (m *metrics) preempted(n int) {
	if m == nil || n == 0 {
		return
	}
	m.warned.Add(float64(n))
}

// preemptionDecision records one preemption decision.
func (m *metrics) preemptionDecision() {
	if m == nil {
		return
	}
	m.decisions.Inc()
}

// taskEnded records a task that reached terminal state st for reason.
func (m *metrics) taskEnded(st protocol.TaskState, reason string) {
	if m == nil {
		return
	}
	m.ended.WithLabelValues(string(st), reasonLabel(reason)).Inc()
}

// reasonLabel keeps the reason label to the reasons allot defines, so that
// what agents send cannot grow the label set.
func reasonLabel(reason string) string {
	switch {
	case reason == "":
		return "none"
	case protocol.KnownReason(reason):
		return reason
	}
	return "other"
}

// launchedAfter records a launch on an offer made at made.
func (m *metrics) launchedAfter(made, now time.Time) {
	if m == nil || made.IsZero() {
		return
	}
	m.toLaunch.Observe(max(0, now.Sub(made).Seconds()))
}

// leadershipChanged records this master becoming or ceasing to be leader.
func (m *metrics) leadershipChanged() {
	if m == nil {
		return
	}
	m.leadership.Inc()
}

// rescinds records n rescinded offers.
func (m *metrics) rescinds(n int) {
	if m == nil || n == 0 {
		return
	}
	m.rescinded.Add(float64(n))
}

// declines records n declined offers.
func (m *metrics) declines(n int) {
	if m == nil || n == 0 {
		return
	}
	m.declined.Add(float64(n))
}

// applied records a Raft apply that started at start; use it as
// `defer metrics.applied(time.Now())`.
func (m *metrics) applied(start time.Time) {
	if m == nil {
		return
	}
	m.raftApply.Observe(time.Since(start).Seconds())
}

// request records the reply to a request on subject. The verb label takes
// only known verbs, so arbitrary subjects cannot grow the label set.
func (m *metrics) request(subj protocol.Subjects, subject string, err error) {
	if m == nil {
		return
	}
	verb := "unknown"
	if api, ok := subj.ParseAPI(subject); ok {
		verb = string(api.Kind) + "." + api.Verb
	}
	m.requests.WithLabelValues(verb, strconv.Itoa(int(protocol.CodeOf(err)))).Inc()
}

// declineCounted is decline, counting the offers of a successful decline.
func (l *leader) declineCounted(r *protocol.DeclineRequest) error {
	err := l.decline(r)
	if err == nil {
		l.metrics.declines(len(r.OfferIDs))
	}
	return err
}
