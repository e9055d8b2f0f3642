// Package sdktest is the scheduler recorder shared by the SDK's own tests
// (framework) and the integration tests that drive real clusters through
// the SDK: one record of what a framework.Scheduler was told, and one set
// of waits on it, so that both suites assert the same way and the helper
// cannot drift between copies.
package sdktest

import (
	"slices"
	"sync"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

// DefaultTimeout bounds a Recorder's waits when its Timeout is zero.
const DefaultTimeout = 10 * time.Second

// pollInterval is short because the waits stand between a test's steps:
// a slow poll would add up over a test's many waits.
const pollInterval = 5 * time.Millisecond

// Arrival is a task status with the time the scheduler received it, for
// tests that bound how late an update came.
type Arrival struct {
	protocol.TaskStatus
	At time.Time
}

// Recorder is a framework.Scheduler that records every callback. The
// hooks, when set, run after the recording, on the driver's callback
// goroutine, so a hook that waits on the Recorder sees its own event. Set
// the hooks and Timeout before the driver runs; the zero Recorder records
// and waits DefaultTimeout.
type Recorder struct {
	// Timeout bounds every wait.
	Timeout time.Duration

	OnRegistered func(d *framework.Driver)
	OnOffers     func(d *framework.Driver, offers []protocol.Offer)
	OnStatus     func(d *framework.Driver, st protocol.TaskStatus)

	mu           sync.Mutex
	registered   []protocol.FrameworkID
	reregistered int
	disconnected int
	offers       []protocol.Offer
	rescinded    []protocol.OfferID
	statuses     []Arrival
	errs         []error
}

var _ framework.Scheduler = (*Recorder)(nil)

// Registered records the framework ID, then runs OnRegistered.
func (r *Recorder) Registered(d *framework.Driver, id protocol.FrameworkID) {
	r.mu.Lock()
	r.registered = append(r.registered, id)
	r.mu.Unlock()
	if r.OnRegistered != nil {
		r.OnRegistered(d)
	}
}

// Reregistered counts the reregistration.
func (r *Recorder) Reregistered(*framework.Driver) {
	r.mu.Lock()
	r.reregistered++
	r.mu.Unlock()
}

// Disconnected counts the disconnection.
func (r *Recorder) Disconnected(*framework.Driver) {
	r.mu.Lock()
	r.disconnected++
	r.mu.Unlock()
}

// Offers records the offers, then runs OnOffers; without a hook the
// offers stay held.
func (r *Recorder) Offers(d *framework.Driver, offers []protocol.Offer) {
	r.mu.Lock()
	r.offers = append(r.offers, offers...)
	r.mu.Unlock()
	if r.OnOffers != nil {
		r.OnOffers(d, offers)
	}
}

// OfferRescinded records the rescinded offer's ID.
func (r *Recorder) OfferRescinded(_ *framework.Driver, id protocol.OfferID) {
	r.mu.Lock()
	r.rescinded = append(r.rescinded, id)
	r.mu.Unlock()
}

// StatusUpdate records the status with its arrival time, then runs
// OnStatus.
func (r *Recorder) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	r.mu.Lock()
	r.statuses = append(r.statuses, Arrival{TaskStatus: st, At: time.Now()})
	r.mu.Unlock()
	if r.OnStatus != nil {
		r.OnStatus(d, st)
	}
}

// ShareUpdate ignores the event: no test asserts on shares through a
// Recorder.
func (r *Recorder) ShareUpdate(*framework.Driver, protocol.ShareUpdateEvent) {}

// Error records err. Hooks may call it to report their own failures,
// which then show in Errors with the driver's.
func (r *Recorder) Error(_ *framework.Driver, err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// RegisteredIDs returns the IDs Registered was called with, in order.
func (r *Recorder) RegisteredIDs() []protocol.FrameworkID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.registered)
}

// Reregistrations returns how many times Reregistered was called.
func (r *Recorder) Reregistrations() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reregistered
}

// Disconnects returns how many times Disconnected was called.
func (r *Recorder) Disconnects() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.disconnected
}

// OfferCount returns how many offers have arrived, a mark for OffersSince
// and WaitOffer.
func (r *Recorder) OfferCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.offers)
}

// OffersSince returns the offers that arrived after the first n, in
// order; OffersSince(0) is every offer.
func (r *Recorder) OffersSince(n int) []protocol.Offer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.offers[n:])
}

// Rescinds returns the IDs of the rescinded offers, in order.
func (r *Recorder) Rescinds() []protocol.OfferID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rescinded)
}

// Errors returns the errors reported, in order.
func (r *Recorder) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

// Statuses returns the statuses received for task id, in arrival order.
func (r *Recorder) Statuses(id protocol.TaskID) []Arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Arrival
	for _, st := range r.statuses {
		if st.TaskID == id {
			out = append(out, st)
		}
	}
	return out
}

// AllStatuses returns every status received, of every task, in arrival
// order.
func (r *Recorder) AllStatuses() []Arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.statuses)
}

func (r *Recorder) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}
