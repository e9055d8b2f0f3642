package dag_test

import (
	"context"
	"fmt"
	"log"
	"strconv"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// Example runs a two-stage job, four extract tasks and then a load task,
// on an in-process cluster.
func Example() {
	cluster, stop := exampleCluster()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	s, err := dag.New()
	if err != nil {
		log.Fatal(err)
	}
	d, err := framework.NewDriver(s, framework.WithNATSURLs(cluster.NATSURL()), framework.WithName("etl"))
	if err != nil {
		log.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()

	task := protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 128})
	err = s.Submit(ctx, dag.Job{
		ID: "etl",
		Spec: altruism.JobSpec{Stages: []altruism.StageSpec{
			{Name: "extract", Tasks: 4, Demand: task, Duration: 50 * time.Millisecond},
			{Name: "load", Tasks: 1, Demand: task, Duration: 50 * time.Millisecond, Parents: []string{"extract"}},
		}},
		Task: func(r dag.TaskRef) protocol.TaskInfo {
			return framework.NewTask("", "./"+r.Stage, "--part", strconv.Itoa(r.Index)).Build()
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Wait(ctx, "etl")
	fmt.Println("etl:", err, res.FairTasks+res.LeftoverTasks, "tasks")
	_ = d.Teardown(ctx)
	fmt.Println("run:", <-ran)
	// Output:
	// etl: <nil> 5 tasks
	// run: <nil>
}

// exampleCluster starts a test cluster of one master and one agent
// outside a test; its agent finishes every task after 50ms.
func exampleCluster() (*testcluster.Cluster, func()) {
	return testcluster.ForExample(testcluster.Options{Masters: 1, Agents: 1})
}
