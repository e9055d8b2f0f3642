package framework

import "github.com/allot-project/allot/protocol"

// Scheduler is what a framework implements: the driver calls it as events
// arrive.
//
// All callbacks are called from one goroutine (the one running
// Driver.Run), one at a time, in the order the events arrived. A callback
// may call any Driver method: those talk to the leader directly and never
// wait for the callback goroutine. Events that arrive while a callback runs
// queue up behind it, so a callback that blocks for long delays every
// later event (but not heartbeats, which the driver answers by itself).
type Scheduler interface {
	// Registered is called once, after the driver's first successful
	// subscribe, with the framework's ID (new, or the one given with
	// WithFrameworkID). Offers come after it returns.
	Registered(d *Driver, id protocol.FrameworkID)
	// Reregistered is called after every later subscribe: a new leader
	// was elected, the NATS connection came back, or the leader stopped
	// sending heartbeats. The driver then declares the framework's demand
	// and suppression again and reconciles all its tasks.
	Reregistered(d *Driver)
	// Disconnected is called when the driver loses its leader or its NATS
	// connection; Reregistered follows once it has subscribed again. When
	// the leader changed, every offer still held is rescinded
	// (OfferRescinded) in between.
	Disconnected(d *Driver)
	// Offers delivers new resource offers. Each must be used (Launch,
	// LaunchGroup), declined, or held; held offers are rescinded when the
	// master's offer timeout passes.
	Offers(d *Driver, offers []protocol.Offer)
	// OfferRescinded withdraws an offer: accepting it now fails. It is
	// also called for every outstanding offer when the leader changes,
	// since a new leader forgets its predecessor's offers.
	OfferRescinded(d *Driver, id protocol.OfferID)
	// StatusUpdate delivers a task's status. Updates are at least once
	// on the wire; the driver drops duplicates of an update (same UUID)
	// within a window of its last updates. Statuses from reconciliation
	// carry no UUID and are always delivered. Unless WithManualAcks was
	// given, the driver acknowledges an update after StatusUpdate returns;
	// the master sends a task's next update only once this one is
	// acknowledged, so a task's updates arrive in order.
	StatusUpdate(d *Driver, st protocol.TaskStatus)
	// ShareUpdate tells the framework where it stands in the fairness
	// hierarchy.
	ShareUpdate(d *Driver, ev protocol.ShareUpdateEvent)
	// Error reports an asynchronous error: an error event from the
	// master, an acknowledgement that failed for good, or the error that
	// ends Run (the master no longer knows the framework, for one).
	Error(d *Driver, err error)
}

// NopScheduler implements every Scheduler method by doing nothing. Embed
// it to implement only the callbacks you need.
type NopScheduler struct{}

var _ Scheduler = NopScheduler{}

// Registered does nothing.
func (NopScheduler) Registered(*Driver, protocol.FrameworkID) {}

// Reregistered does nothing.
func (NopScheduler) Reregistered(*Driver) {}

// Disconnected does nothing.
func (NopScheduler) Disconnected(*Driver) {}

// Offers does nothing; the offers stay held until they are rescinded.
func (NopScheduler) Offers(*Driver, []protocol.Offer) {}

// OfferRescinded does nothing.
func (NopScheduler) OfferRescinded(*Driver, protocol.OfferID) {}

// StatusUpdate does nothing.
func (NopScheduler) StatusUpdate(*Driver, protocol.TaskStatus) {}

// ShareUpdate does nothing.
func (NopScheduler) ShareUpdate(*Driver, protocol.ShareUpdateEvent) {}

// Error does nothing.
func (NopScheduler) Error(*Driver, error) {}
