package protocol

import "fmt"

// FlowSpec is one flow of a coflow: data moving from the agent running the
// producers to the agent running the consumers. A coflow has at most one
// flow per (Src, Dst) pair; the flow is every transfer of the coflow
// between them (in a MapReduce shuffle, each reducer on Dst fetching its
// partition of each map output on Src).
type FlowSpec struct {
	Src AgentID `msgpack:"src" json:"src"`
	Dst AgentID `msgpack:"dst" json:"dst"`
	// Bytes is the flow's size when known in advance, else 0.
	Bytes int64 `msgpack:"bytes,omitempty" json:"bytes,omitempty"`
	// Transfers is the number of transfers (requests to Src's file
	// server) the flow is made of, else 0. The flow has finished once
	// Src's agent reports that many transfers, or Bytes bytes; a flow
	// needs one of the two.
	Transfers int `msgpack:"n,omitempty" json:"transfers,omitempty"`
}

// CoflowRegisterRequest announces a coflow (e.g. one MapReduce shuffle) so
// the master can rank it against others (Philae).
// Registering a coflow the framework has registered before replaces the
// totals of the flows listed and adds the others (a shuffle grows as its
// consumers are placed); what was sent already counts. The master forgets
// a coflow once all its flows have finished, or when it is withdrawn.
type CoflowRegisterRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	CoflowID    string      `msgpack:"cf" json:"coflow_id"`
	Flows       []FlowSpec  `msgpack:"flows" json:"flows"`
	// Withdraw forgets the coflow (its job ended or gave up); Flows must
	// then be empty.
	Withdraw bool `msgpack:"withdraw,omitempty" json:"withdraw,omitempty"`
}

// Validate checks IDs, the flow list length and flow sizes.
func (r CoflowRegisterRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkID("coflow_id", r.CoflowID); err != nil {
		return err
	}
	if r.Withdraw {
		if len(r.Flows) > 0 {
			return Errorf(ErrInvalidArgument, "coflow %s is withdrawn with flows", r.CoflowID)
		}
		return nil
	}
	if len(r.Flows) == 0 {
		return Errorf(ErrInvalidArgument, "coflow %s has no flows", r.CoflowID)
	}
	if err := checkLen("flows", len(r.Flows), MaxListLen); err != nil {
		return err
	}
	seen := make(map[[2]AgentID]bool, len(r.Flows))
	for i, f := range r.Flows {
		if err := checkID("src", f.Src); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkID("dst", f.Dst); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkNonNegative("bytes", f.Bytes); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkNonNegative("transfers", int64(f.Transfers)); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if f.Bytes == 0 && f.Transfers == 0 {
			return Errorf(ErrInvalidArgument, "flows[%d]: %s to %s has neither bytes nor transfers", i, f.Src, f.Dst)
		}
		if seen[[2]AgentID{f.Src, f.Dst}] {
			return Errorf(ErrInvalidArgument, "flows[%d]: a second flow from %s to %s", i, f.Src, f.Dst)
		}
		seen[[2]AgentID{f.Src, f.Dst}] = true
	}
	return nil
}

// FlowProgress is an agent's report on one flow it serves: what it has
// sent of the flow so far, in total.
type FlowProgress struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	CoflowID    string      `msgpack:"cf" json:"coflow_id"`
	Src         AgentID     `msgpack:"src" json:"src"`
	Dst         AgentID     `msgpack:"dst" json:"dst"`
	BytesSent   int64       `msgpack:"sent" json:"bytes_sent"`
	// Transfers counts the flow's transfers that have finished.
	Transfers int `msgpack:"n,omitempty" json:"transfers,omitempty"`
	// Done says the sender knows the flow has finished, whatever the
	// totals it was registered with.
	Done bool `msgpack:"done,omitempty" json:"done,omitempty"`
}

// CoflowReportRequest reports the progress of flows an agent's shuffle
// server is sending (Philae's pilot-flow sampling reads these).
type CoflowReportRequest struct {
	AgentID AgentID        `msgpack:"ag" json:"agent_id"`
	Flows   []FlowProgress `msgpack:"flows" json:"flows"`
}

// Validate checks IDs, the flow list length and byte counts.
func (r CoflowReportRequest) Validate() error {
	if err := checkID("agent_id", r.AgentID); err != nil {
		return err
	}
	if err := checkLen("flows", len(r.Flows), MaxListLen); err != nil {
		return err
	}
	for i, f := range r.Flows {
		if err := checkID("framework_id", f.FrameworkID); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkID("coflow_id", f.CoflowID); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkID("src", f.Src); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkID("dst", f.Dst); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkNonNegative("bytes_sent", f.BytesSent); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
		if err := checkNonNegative("transfers", int64(f.Transfers)); err != nil {
			return fmt.Errorf("flows[%d]: %w", i, err)
		}
	}
	return nil
}

// CoflowPriority is a place in an agent's schedule: Rank orders the entries
// (0 first); Queue is the coordinator's priority queue of the coflow (0
// highest; -1 for a coflow in none, such as a thin or piloting one under
// Philae). An entry with Dst ranks the coflow's flow from this agent to Dst
// only; one without ranks every flow of the coflow not ranked on its own.
type CoflowPriority struct {
	FrameworkID FrameworkID `msgpack:"fw,omitempty" json:"framework_id,omitempty"`
	CoflowID    string      `msgpack:"cf" json:"coflow_id"`
	Dst         AgentID     `msgpack:"dst,omitempty" json:"dst,omitempty"`
	Rank        int         `msgpack:"rank" json:"rank"`
	Queue       int         `msgpack:"queue" json:"queue"`
	// Src is set instead of Dst in an entry of an ingress list: it ranks
	// the coflow's flow from Src into this agent.
	Src AgentID `msgpack:"src,omitempty" json:"src,omitempty"`
}

// CoflowPrioritiesCommand tells an agent's shuffle server the current
// order of the flows it sends; it replaces the previous one. Epoch grows
// with every schedule the leader computes, so an agent can drop a command
// that arrives after a newer one. Transfers of flows not listed go last,
// in arrival order.
type CoflowPrioritiesCommand struct {
	Epoch      uint64           `msgpack:"epoch,omitempty" json:"epoch,omitempty"`
	Priorities []CoflowPriority `msgpack:"prio" json:"priorities"`
	// Ingress is the order of the unfinished flows into the agent, for its
	// shuffle ingress (entries name Src, not Dst).
	Ingress []CoflowPriority `msgpack:"in,omitempty" json:"ingress,omitempty"`
}
