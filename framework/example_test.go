package framework_test

import (
	"context"
	"fmt"
	"log"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// batch runs a list of tasks and tears the framework down when they have
// all ended.
type batch struct {
	framework.NopScheduler
	todo []protocol.TaskInfo // not launched yet
	left int                 // not ended yet
}

func (b *batch) Registered(*framework.Driver, protocol.FrameworkID) { fmt.Println("registered") }

func (b *batch) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx := context.Background()
	for _, o := range offers {
		n := int64(0)
		if len(b.todo) > 0 {
			n = min(placement.HowMany(o.Resources, placement.ShapeOf(b.todo[0], 1)), int64(len(b.todo)))
		}
		if n == 0 {
			_ = d.Decline(ctx, []protocol.OfferID{o.ID}, 0)
			continue
		}
		if err := d.Launch(ctx, []protocol.OfferID{o.ID}, b.todo[:n]...); err != nil {
			log.Printf("launch: %v", err) // the offer comes back, or reconciliation settles it
			continue
		}
		b.todo = b.todo[n:]
	}
}

func (b *batch) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	if st.State.Terminal() {
		if b.left--; b.left == 0 {
			fmt.Println("all tasks ended")
			_ = d.Teardown(context.Background()) // Run returns
		}
	}
}

// Example runs a small batch scheduler against an in-process cluster of
// three masters and two agents.
func Example() {
	cluster, stop := exampleCluster(2)
	defer stop()

	b := &batch{left: 6}
	for i := range 6 {
		b.todo = append(b.todo, framework.NewTask(protocol.TaskID(fmt.Sprint("task-", i)), "sleep", "0.05").
			CPUs(1000).Mem(128).Build())
	}
	d, err := framework.NewDriver(b, framework.WithNATSURLs(cluster.NATSURL()), framework.WithName("batch"))
	if err != nil {
		log.Fatal(err)
	}
	// Declared before Run: the first offers are sized for these tasks.
	if err := d.Demand(context.Background(), placement.ShapeOf(b.todo[0], 6)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", d.Run(context.Background()))
	// Output:
	// registered
	// all tasks ended
	// run: <nil>
}

// exampleCluster starts a test cluster outside a test, for Examples.
func exampleCluster(agents int) (*testcluster.Cluster, func()) {
	return testcluster.ForExample(testcluster.Options{Agents: agents})
}
