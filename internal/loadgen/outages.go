package loadgen

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
)

// outages times the simulated agents' NATS outages: from the moment an
// agent's connection drops (its master killed, say) to the moment it is
// connected again, and to its first heartbeat a leader answered after
// that. An agent heard again later than the agent timeout is marked
// unreachable and its tasks lost, so these say whether a loss was the
// agent's way back to a server or the leader's way to it; the errors of
// the failed reconnects and heartbeats meanwhile say why.
type outages struct {
	log hclog.Logger

	mu        sync.Mutex
	down      map[int]*outage // agents disconnected and not yet heard since
	reconnect []time.Duration // disconnected to connected again
	heardIn   []time.Duration // disconnected to heard by a leader
	errs      map[string]int  // failed reconnects and heartbeats during outages, by kind
}

// outage is one agent's: since when, and whether it is connected again.
type outage struct {
	since time.Time
	back  bool
}

// slowOutage is how long an outage may last before the agent's way back
// is logged: half the agent timeout at 10,000 agents.
const slowOutage = 15 * time.Second

func newOutages(log hclog.Logger) *outages {
	return &outages{log: log, down: map[int]*outage{}, errs: map[string]int{}}
}

// options are agent i's connection's handlers.
func (o *outages) options(i int) []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			o.mu.Lock()
			defer o.mu.Unlock()
			if d, ok := o.down[i]; ok {
				d.back = false
			} else {
				o.down[i] = &outage{since: time.Now()}
			}
		}),
		nats.ReconnectErrHandler(func(nc *nats.Conn, err error) {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.errs["reconnect: "+errorKind(err)]++
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			o.mu.Lock()
			defer o.mu.Unlock()
			out, ok := o.down[i]
			if !ok || out.back {
				return
			}
			out.back = true
			d := time.Since(out.since)
			o.reconnect = append(o.reconnect, d)
			if d > slowOutage {
				o.log.Info("agent connected again late", "agent", i, "after", d, "server", nc.ConnectedUrlRedacted())
			}
		}),
	}
}

// heartbeat records the outcome of a heartbeat of agent i.
func (o *outages) heartbeat(i int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	out, ok := o.down[i]
	switch {
	case !ok:
		return
	case err != nil:
		o.errs["heartbeat: "+errorKind(err)]++
		return
	case !out.back:
		return // answered through the buffer of a connection not back yet
	}
	delete(o.down, i)
	d := time.Since(out.since)
	o.heardIn = append(o.heardIn, d)
	if d > slowOutage {
		o.log.Info("agent heard again late", "agent", i, "after", d)
	}
}

var ports = regexp.MustCompile(`:[0-9]+`)

// errorKind is err's text with its ports elided.
func errorKind(err error) string {
	s := ports.ReplaceAllString(err.Error(), ":N")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// OutageStats summarize the outages since the last take.
type OutageStats struct {
	// Reconnect is the time from a drop to connected again; Heard, to
	// the first heartbeat answered after it.
	Reconnect, Heard Quantiles
	// Errors count the failed reconnects and heartbeats during outages,
	// by kind.
	Errors map[string]int
	// StillDown counts the agents disconnected, or not heard since.
	StillDown int
}

func (o *outages) take() OutageStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := OutageStats{Reconnect: quantiles(o.reconnect), Heard: quantiles(o.heardIn), Errors: o.errs, StillDown: len(o.down)}
	o.reconnect, o.heardIn, o.errs = nil, nil, map[string]int{}
	return s
}

// topErrors lists the commonest kinds of errors, with their counts.
func (s OutageStats) topErrors(n int) string {
	kinds := slices.SortedFunc(maps.Keys(s.Errors), func(a, b string) int {
		return cmp.Or(cmp.Compare(s.Errors[b], s.Errors[a]), strings.Compare(a, b))
	})
	var out []string
	for _, k := range kinds[:min(n, len(kinds))] {
		out = append(out, fmt.Sprintf("%d × %s", s.Errors[k], k))
	}
	return strings.Join(out, "; ")
}
