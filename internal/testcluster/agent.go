package testcluster

import (
	"time"

	"github.com/allot-project/allot/internal/simagent"
	"github.com/allot-project/allot/protocol"
)

// The test agents are package simagent's agents; these names keep the
// tests that use them through testcluster unchanged.
type (
	// TestAgent is a protocol-level agent that runs tasks in memory
	// (simagent.Agent).
	TestAgent = simagent.Agent
	// AgentOptions configures a TestAgent (simagent.Options).
	AgentOptions = simagent.Options
	// AgentTask is a snapshot of one task as the agent saw it.
	AgentTask = simagent.AgentTask
	// RefusedUpdate is a status update the master refused for good.
	RefusedUpdate = simagent.RefusedUpdate
	// TaskKey names a task across frameworks.
	TaskKey = simagent.TaskKey
	// Behaviour says how a test task ends.
	Behaviour = simagent.Behaviour
	// BehaviourKind is what a test task does once it runs.
	BehaviourKind = simagent.BehaviourKind
)

// LabelBehaviour is the task label that tells a TestAgent how the task
// behaves once RUNNING (simagent.LabelBehaviour).
const LabelBehaviour = simagent.LabelBehaviour

// Behaviour kinds (simagent's).
const (
	BehaviourFinish = simagent.BehaviourFinish
	BehaviourFail   = simagent.BehaviourFail
	BehaviourRun    = simagent.BehaviourRun
)

// Finish is a task that ends FINISHED after d.
func Finish(d time.Duration) Behaviour { return simagent.Finish(d) }

// Fail is a task that ends FAILED after d.
func Fail(d time.Duration) Behaviour { return simagent.Fail(d) }

// RunUntilKilled is a task that runs until it is killed.
func RunUntilKilled() Behaviour { return simagent.RunUntilKilled() }

// ParseBehaviour reads a Behaviour's String form.
func ParseBehaviour(s string) (Behaviour, error) { return simagent.ParseBehaviour(s) }

// NewAgent starts a test agent on a connection of its own, as the next
// agent principal where the cluster authenticates, and waits until it is
// registered. It stops when the test ends. opts.Principal is ignored.
func (c *Cluster) NewAgent(opts AgentOptions) *TestAgent {
	c.t.Helper()
	c.mu.Lock()
	n := len(c.agents)
	c.mu.Unlock()
	opts.Principal = c.nextAgentPrincipal()
	nc := c.ConnectAs(protocol.Identity{Kind: protocol.KindAgent, Name: protocol.PrincipalToken(opts.Principal)})
	a, err := simagent.Start(nc, c.subj, n, opts, c.logger)
	if err != nil {
		fatalf(c.t, "%v", err)
	}
	c.mu.Lock()
	c.agents = append(c.agents, a)
	c.mu.Unlock()
	c.t.Cleanup(a.Close)
	return a
}
