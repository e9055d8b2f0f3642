package protocol

import (
	"fmt"
	"time"
)

// Addresses are where an agent can be reached besides NATS.
type Addresses struct {
	// HTTP is the host:port of the agent's file and shuffle server.
	HTTP string `msgpack:"http,omitempty" json:"http,omitempty"`
}

// RegisterRequest registers a new agent; the reply assigns its AgentID.
type RegisterRequest struct {
	Hostname   string     `msgpack:"host" json:"hostname"`
	Addresses  Addresses  `msgpack:"addrs" json:"addresses"`
	Resources  Resources  `msgpack:"res" json:"resources"`
	Attributes Attributes `msgpack:"attrs,omitempty" json:"attributes,omitempty"`
	// Version is the agent's software version.
	Version string `msgpack:"ver,omitempty" json:"version,omitempty"`
}

// Validate checks the hostname, addresses, resources and attributes.
func (r RegisterRequest) Validate() error {
	return validateAgentInfo(r.Hostname, r.Addresses, r.Resources, r.Attributes, r.Version)
}

// RegisterReply answers a successful register or reregister.
type RegisterReply struct {
	AgentID AgentID `msgpack:"ag" json:"agent_id"`
	// HeartbeatInterval is how often the agent must send HeartbeatRequest.
	// Nanoseconds on the wire.
	HeartbeatInterval time.Duration `msgpack:"hb" json:"heartbeat_interval"`
}

// ReregisterRequest re-attaches a known agent after a master failover, an
// agent restart or a partition, with the tasks it runs and the status
// updates the master has not acknowledged yet.
type ReregisterRequest struct {
	AgentID    AgentID    `msgpack:"ag" json:"agent_id"`
	Hostname   string     `msgpack:"host" json:"hostname"`
	Addresses  Addresses  `msgpack:"addrs" json:"addresses"`
	Resources  Resources  `msgpack:"res" json:"resources"`
	Attributes Attributes `msgpack:"attrs,omitempty" json:"attributes,omitempty"`
	Version    string     `msgpack:"ver,omitempty" json:"version,omitempty"`
	// Tasks are the latest statuses of the tasks the agent runs.
	Tasks []TaskStatus `msgpack:"tasks,omitempty" json:"tasks,omitempty"`
	// Unacked are status updates the master has not acknowledged.
	Unacked []StatusUpdate `msgpack:"unacked,omitempty" json:"unacked,omitempty"`
}

// Validate checks the agent fields, list lengths and every status.
func (r ReregisterRequest) Validate() error {
	if err := checkID("agent_id", r.AgentID); err != nil {
		return err
	}
	if err := validateAgentInfo(r.Hostname, r.Addresses, r.Resources, r.Attributes, r.Version); err != nil {
		return err
	}
	if err := checkLen("tasks", len(r.Tasks), MaxListLen); err != nil {
		return err
	}
	if err := checkLen("unacked", len(r.Unacked), MaxListLen); err != nil {
		return err
	}
	for i, t := range r.Tasks {
		if err := t.Validate(); err != nil {
			return fmt.Errorf("tasks[%d]: %w", i, err)
		}
	}
	for i, u := range r.Unacked {
		if err := u.Validate(); err != nil {
			return fmt.Errorf("unacked[%d]: %w", i, err)
		}
	}
	return nil
}

// HeartbeatRequest tells the leader the agent is alive. An agent the leader
// does not know gets ErrUnknownAgent and must reregister.
type HeartbeatRequest struct {
	AgentID AgentID `msgpack:"ag" json:"agent_id"`
}

// Validate checks the agent ID.
func (r HeartbeatRequest) Validate() error { return checkID("agent_id", r.AgentID) }

// HeartbeatReply answers a heartbeat with the interval the leader asks
// for now: it grows with the number of agents, so that the leader is sent
// no more heartbeats a second than it is configured to take.
type HeartbeatReply struct {
	// HeartbeatInterval is how often the agent must send HeartbeatRequest
	// from now on (zero: keep its interval). Nanoseconds on the wire.
	HeartbeatInterval time.Duration `msgpack:"hb" json:"heartbeat_interval"`
}

// StatusUpdateRequest forwards a batch of status updates from an agent, in
// order (at most one per task is usual; several for one task apply in the
// order given). The agent resends each until an AckCommand names its UUID.
type StatusUpdateRequest struct {
	AgentID AgentID        `msgpack:"ag" json:"agent_id"`
	Updates []StatusUpdate `msgpack:"u" json:"updates"`
}

// Validate checks the agent ID, the batch size and every update, whose
// status must name this agent or none.
func (r StatusUpdateRequest) Validate() error {
	if err := checkID("agent_id", r.AgentID); err != nil {
		return err
	}
	if len(r.Updates) == 0 {
		return Errorf(ErrInvalidArgument, "status update request without updates")
	}
	if err := checkLen("updates", len(r.Updates), MaxStatusBatch); err != nil {
		return err
	}
	for i, u := range r.Updates {
		if a := u.Status.AgentID; a != "" && a != r.AgentID {
			return Errorf(ErrInvalidArgument, "updates[%d]: status names agent %q, sender is %q", i, truncate(string(a)), r.AgentID)
		}
		if err := u.Validate(); err != nil {
			return fmt.Errorf("updates[%d]: %w", i, err)
		}
	}
	return nil
}

// StatusUpdateReply answers a StatusUpdateRequest: every update not listed
// in Refused is stored in Raft. A refused update can never apply (its task
// is gone or already terminal, say); the agent must not resend it.
type StatusUpdateReply struct {
	Refused []Refusal `msgpack:"r,omitempty" json:"refused,omitempty"`
}

// Refusal names one status update or acknowledgement of a batch that the
// leader refused, with the typed error (FromWire rebuilds it).
type Refusal struct {
	TaskID TaskID     `msgpack:"tid" json:"task_id"`
	UUID   StatusUUID `msgpack:"uuid" json:"uuid"`
	Error  *Error     `msgpack:"e" json:"error"`
}

// Err returns the refusal's typed error.
func (r Refusal) Err() error { return FromWire(r.Error) }

func validateAgentInfo(host string, addrs Addresses, res Resources, attrs Attributes, version string) error {
	if err := checkRequired("hostname", host, MaxNameLen); err != nil {
		return err
	}
	if err := checkText("http address", addrs.HTTP, MaxNameLen); err != nil {
		return err
	}
	if err := checkResources("resources", res); err != nil {
		return err
	}
	if err := checkAttributes("attributes", attrs); err != nil {
		return err
	}
	return checkText("version", version, MaxNameLen)
}
