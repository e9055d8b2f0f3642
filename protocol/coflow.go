package protocol

import "fmt"

// FlowSpec is one flow of a coflow: data moving from the agent running the
// producer to the agent running the consumer.
type FlowSpec struct {
	Src AgentID `msgpack:"src" json:"src"`
	Dst AgentID `msgpack:"dst" json:"dst"`
	// Bytes is the flow's size when known in advance, else 0.
	Bytes int64 `msgpack:"bytes,omitempty" json:"bytes,omitempty"`
}

// CoflowRegisterRequest announces a coflow (e.g. one MapReduce shuffle) so
// the master can rank it against others (Philae).
type CoflowRegisterRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	CoflowID    string      `msgpack:"cf" json:"coflow_id"`
	Flows       []FlowSpec  `msgpack:"flows" json:"flows"`
}

// Validate checks IDs, the flow list length and flow sizes.
func (r CoflowRegisterRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkID("coflow_id", r.CoflowID); err != nil {
		return err
	}
	if len(r.Flows) == 0 {
		return Errorf(ErrInvalidArgument, "coflow %s has no flows", r.CoflowID)
	}
	if err := checkLen("flows", len(r.Flows), MaxListLen); err != nil {
		return err
	}
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
	}
	return nil
}

// FlowProgress is an agent's report on one flow it serves.
type FlowProgress struct {
	CoflowID  string  `msgpack:"cf" json:"coflow_id"`
	Src       AgentID `msgpack:"src" json:"src"`
	Dst       AgentID `msgpack:"dst" json:"dst"`
	BytesSent int64   `msgpack:"sent" json:"bytes_sent"`
	Done      bool    `msgpack:"done,omitempty" json:"done,omitempty"`
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
	}
	return nil
}

// CoflowPriority is one coflow's place in the schedule: Rank orders coflows
// (0 first); Queue is the priority queue the shuffle server puts its flows in
// (0 highest).
type CoflowPriority struct {
	CoflowID string `msgpack:"cf" json:"coflow_id"`
	Rank     int    `msgpack:"rank" json:"rank"`
	Queue    int    `msgpack:"queue" json:"queue"`
}

// CoflowPrioritiesCommand tells an agent's shuffle server the current coflow
// order; it replaces the previous one. Coflows not listed go last.
type CoflowPrioritiesCommand struct {
	Priorities []CoflowPriority `msgpack:"prio" json:"priorities"`
}
