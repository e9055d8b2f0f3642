// Package framework is the SDK for writing allot frameworks: the second
// level of two-level scheduling. The master decides which framework is
// offered which agent's resources; a framework, through this package,
// decides what to run on them.
//
// A framework implements Scheduler (embed NopScheduler for the callbacks
// it does not need) and hands it to a Driver. Driver.Run connects to NATS,
// subscribes the framework with the leading master, and calls the
// scheduler as events arrive: Registered, Offers, StatusUpdate, ... The
// scheduler answers with Driver calls: Launch or LaunchGroup on offers,
// Decline, Demand, Suppress and Revive, Kill, Reconcile, Teardown. Every
// call takes a context first, and returns errors that errors.Is matches
// against the protocol sentinels even though they crossed the wire
// (protocol.ErrUnknownOffer, protocol.ErrNotLeader, ...), or against this
// package's own (ErrAmbiguous, ErrNotRunning, ...).
//
// The driver takes care of what every framework would otherwise get
// wrong:
//
//   - Offers start after the framework's first request following its
//     subscribe: the driver declares the demand (if any) and then revives,
//     so offers follow the declared demand from the first one.
//   - Leader changes: it follows the leader announcements, subscribes again
//     with the same framework ID, declares its demand and suppression
//     again (the leader keeps them in memory only), and reconciles all
//     tasks. A NATS reconnect, or a leader that stops sending heartbeats,
//     does the same.
//   - Retries: idempotent requests are retried with capped, jittered
//     back-off while no leader answers; an accept is never repeated (an
//     unanswered one may have committed), its error wraps ErrAmbiguous and
//     the driver reconciles its tasks.
//   - Status updates are acknowledged after StatusUpdate returns, in
//     batches (WithManualAcks hands that to the scheduler); duplicates of
//     an update are dropped within a window of recent updates. A task's
//     updates arrive in order, each once the one before is acknowledged.
//   - A framework the master no longer knows (removed after its failover
//     timeout) ends Run with an error wrapping protocol.ErrUnknownFramework.
//   - Preemption warnings (protocol.PreemptionEvent) go to schedulers that
//     implement the optional PreemptionHandler; Driver.Warned lists the
//     warnings in force. WithoutRevocable keeps revocable resources away,
//     and TaskBuilder.NonPreemptible asks that a task never be preempted.
//   - Agents the master takes out of the cluster (protocol.AgentLostEvent)
//     are reported to schedulers that implement the optional
//     AgentLostHandler.
//
// Helpers cover the rest of a scheduler's work: resource arithmetic on
// offers (SumOffers, Fits, HowMany, PickPorts), constraint matching with
// the same evaluation the master and agents run (MatchOffer, GroupAllows),
// a task builder (NewTask), a placement search over offers (Place), and
// Gang, which holds offers across agents until a whole group of tasks can
// start at once, and lets them go on a deadline so that competing gangs
// cannot deadlock.
//
// # Example
//
// A scheduler that runs ten one-CPU tasks and stops when they have all
// ended:
//
//	type batch struct {
//		framework.NopScheduler
//		todo []protocol.TaskInfo // not launched yet
//		left int                 // not ended yet
//	}
//
//	func (b *batch) Offers(d *framework.Driver, offers []protocol.Offer) {
//		ctx := context.Background()
//		for _, o := range offers {
//			n := int64(0)
//			if len(b.todo) > 0 {
//				n = min(placement.HowMany(o.Resources, placement.ShapeOf(b.todo[0], 1)), int64(len(b.todo)))
//			}
//			if n == 0 {
//				_ = d.Decline(ctx, []protocol.OfferID{o.ID}, 0)
//				continue
//			}
//			if err := d.Launch(ctx, []protocol.OfferID{o.ID}, b.todo[:n]...); err != nil {
//				log.Printf("launch: %v", err) // the offers come back, or reconciliation settles it
//				continue
//			}
//			b.todo = b.todo[n:]
//			if len(b.todo) == 0 {
//				_ = d.Suppress(ctx) // no more offers wanted
//			}
//		}
//	}
//
//	func (b *batch) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
//		if st.State.Terminal() {
//			if b.left--; b.left == 0 {
//				_ = d.Teardown(context.Background()) // Run returns
//			}
//		}
//	}
//
//	func main() {
//		b := &batch{left: 10}
//		for i := range 10 {
//			b.todo = append(b.todo, framework.NewTask(protocol.TaskID(fmt.Sprint("task-", i)), "sleep", "1").
//				CPUs(1000).Mem(128).Build())
//		}
//		d, err := framework.NewDriver(b, framework.WithNATSURLs("nats://127.0.0.1:4222"),
//			framework.WithName("batch"))
//		if err != nil {
//			log.Fatal(err)
//		}
//		// Declared before Run: the first offers are sized for these tasks.
//		_ = d.Demand(context.Background(), placement.ShapeOf(b.todo[0], 10))
//		if err := d.Run(context.Background()); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// The same scheduler runs against an in-process cluster in this package's
// Example.
package framework
