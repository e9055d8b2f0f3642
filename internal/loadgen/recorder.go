package loadgen

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/allot-project/allot/protocol"
)

// recorder gathers what the frameworks see: latencies, the tasks' ends,
// and when offers arrive (for the leader kills).
type recorder struct {
	mu sync.Mutex
	// measuring is set during the measured window: latencies are kept
	// only then.
	measuring   bool
	offerLaunch []time.Duration // from the offer's arrival to the launch's arrival at the agent
	statusDelay []time.Duration // from an update's creation on the agent to its arrival here
	// offerLaunch in two: from the offer's arrival to the framework's
	// launch call, and from the call to the launch's arrival at the agent.
	offerWait, callToAgent []time.Duration
	// offerToWire is from the offer's arrival to the launch command's
	// arrival at a client beside the agents (watchLaunches).
	offerToWire []span
	// calls are the launch calls' spans (acceptCall, with their times).
	calls []span
	// kills are when the leader was killed.
	kills    []time.Time
	launched int
	ended    map[string]int
	// redelivered are terminal updates of a task that had ended already,
	// in the same state (delivery is at least once); conflicting ones in
	// another state.
	redelivered, conflicting int
	launchErrors             int
	lastPrefix               string
	offerWaiters             []offerWaiter
}

type offerWaiter struct {
	after time.Time
	// not is the offer ID prefix of the leader killed: its offers still
	// in flight after the kill do not count.
	not string
	ch  chan time.Time
}

// span is one latency sample: from..from+d.
type span struct {
	from time.Time
	d    time.Duration
}

// across reports whether a kill fell inside the span.
func (s span) across(kills []time.Time) bool {
	for _, k := range kills {
		if !k.Before(s.from) && !k.After(s.from.Add(s.d)) {
			return true
		}
	}
	return false
}

// durations are the samples' durations: all of them, and those no kill
// fell inside.
func durations(spans []span, kills []time.Time) (all, calm []time.Duration) {
	for _, s := range spans {
		all = append(all, s.d)
		if !s.across(kills) {
			calm = append(calm, s.d)
		}
	}
	return all, calm
}

func newRecorder() *recorder { return &recorder{ended: map[string]int{}} }

// offers notes offers arriving at t, made by the leader whose offer IDs
// start with prefix, and answers whoever waits for the first offer of
// another leader after a time before t.
func (r *recorder) offers(t time.Time, prefix string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastPrefix = prefix
	r.offerWaiters = slices.DeleteFunc(r.offerWaiters, func(w offerWaiter) bool {
		if t.After(w.after) && prefix != w.not {
			w.ch <- t
			return true
		}
		return false
	})
}

// firstOfferAfter returns a channel that receives the arrival time of the
// first offer that arrives after t from another leader than the one whose
// offers arrived last (each leader's offer IDs have a prefix of their own).
func (r *recorder) firstOfferAfter(t time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	r.mu.Lock()
	r.offerWaiters = append(r.offerWaiters, offerWaiter{after: t, not: r.lastPrefix, ch: ch})
	r.mu.Unlock()
	return ch
}

// offerPrefix is an offer ID less its sequence number: the leader's part.
func offerPrefix(id protocol.OfferID) string {
	s := string(id)
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		return s[:i]
	}
	return s
}

func (r *recorder) launchedTasks(n int) {
	r.mu.Lock()
	r.launched += n
	r.mu.Unlock()
}

func (r *recorder) launchFailed() {
	r.mu.Lock()
	r.launchErrors++
	r.mu.Unlock()
}

// started records the first update, made at at, of a task offered at
// offerAt and launched by a call made at calledAt (zero if unknown).
func (r *recorder) started(offerAt, calledAt, at time.Time) {
	r.mu.Lock()
	if r.measuring {
		r.offerLaunch = append(r.offerLaunch, at.Sub(offerAt))
		if !calledAt.IsZero() {
			r.offerWait = append(r.offerWait, calledAt.Sub(offerAt))
			r.callToAgent = append(r.callToAgent, at.Sub(calledAt))
		}
	}
	r.mu.Unlock()
}

// onWire records a launch command heard at now, its offer having arrived
// at offerAt.
func (r *recorder) onWire(offerAt, now time.Time) {
	r.mu.Lock()
	if r.measuring {
		r.offerToWire = append(r.offerToWire, span{offerAt, now.Sub(offerAt)})
	}
	r.mu.Unlock()
}

// killed notes a leader kill at t.
func (r *recorder) killed(t time.Time) {
	r.mu.Lock()
	r.kills = append(r.kills, t)
	r.mu.Unlock()
}

// update records an update created at created and received at now.
func (r *recorder) update(created, now time.Time) {
	r.mu.Lock()
	if r.measuring {
		r.statusDelay = append(r.statusDelay, now.Sub(created))
	}
	r.mu.Unlock()
}

// ended1 counts a task's end by state, and reason unless it finished.
func (r *recorder) ended1(st protocol.TaskStatus) {
	key := string(st.State)
	if st.State != protocol.TaskFinished && st.Reason != "" {
		key += " (" + st.Reason + ")"
	}
	r.mu.Lock()
	r.ended[key]++
	r.mu.Unlock()
}

func (r *recorder) endedAgain(conflicting bool) {
	r.mu.Lock()
	if conflicting {
		r.conflicting++
	} else {
		r.redelivered++
	}
	r.mu.Unlock()
}

func (r *recorder) measure(on bool) {
	r.mu.Lock()
	r.measuring = on
	r.mu.Unlock()
}

// accepted records a launch call made at called, answered at now.
func (r *recorder) accepted(called, now time.Time) {
	r.mu.Lock()
	if r.measuring {
		r.calls = append(r.calls, span{called, now.Sub(called)})
	}
	r.mu.Unlock()
}

// latencies copies the latencies gathered so far.
func (r *recorder) latencies() latencies {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := latencies{offerLaunch: slices.Clone(r.offerLaunch), statusDelay: slices.Clone(r.statusDelay),
		offerWait: slices.Clone(r.offerWait), callToAgent: slices.Clone(r.callToAgent)}
	l.acceptCall, l.acceptCallCalm = durations(r.calls, r.kills)
	l.offerToWire, l.offerToWireCalm = durations(r.offerToWire, r.kills)
	return l
}

// latencies are the window's samples; the Calm ones leave out those a
// leader kill fell inside of.
type latencies struct {
	offerLaunch, statusDelay, acceptCall, offerWait, callToAgent, offerToWire []time.Duration
	acceptCallCalm, offerToWireCalm                                           []time.Duration
}

// percentile of ds, sorted: the value at rank q.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[int(q*float64(len(ds)-1))]
}
