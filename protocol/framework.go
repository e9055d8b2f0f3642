package protocol

import (
	"fmt"
	"slices"
	"time"
)

// Framework capabilities declared at subscribe. Unknown capabilities are
// ignored, so newer SDKs can talk to older masters.
const (
	// CapAltruistic: the framework runs the Carbyne planner and declines
	// surplus as leftover; it may receive leftover offers.
	CapAltruistic = "altruistic"
	// CapGang: the framework asks for all-or-nothing placement of task groups
	// across agents.
	CapGang = "gang"
	// CapPartitionAware: the framework understands UNREACHABLE.
	CapPartitionAware = "partition_aware"
	// CapNoRevocable: the framework takes no revocable resources; it is
	// never offered leftover, whatever it declares.
	CapNoRevocable = "no_revocable"
)

// maxWeight bounds SubscribeRequest.Weight.
const maxWeight = 1e6

// SubscribeRequest registers a new framework (empty FrameworkID) or
// re-subscribes an existing one after a disconnect or scheduler failover.
type SubscribeRequest struct {
	FrameworkID FrameworkID `msgpack:"fw,omitempty" json:"framework_id,omitempty"`
	Name        string      `msgpack:"name" json:"name"`
	Principal   string      `msgpack:"principal,omitempty" json:"principal,omitempty"`
	// Role is the role path the framework joins, e.g. "eng/prod".
	Role string `msgpack:"role" json:"role"`
	// FailoverTimeout is how long the master keeps the framework's tasks
	// after it disconnects; 0 kills them at once. Nanoseconds on the wire.
	FailoverTimeout time.Duration `msgpack:"failover,omitempty" json:"failover_timeout,omitempty"`
	Capabilities    []string      `msgpack:"caps,omitempty" json:"capabilities,omitempty"`
	// Suppressed subscribes without wanting offers until Revive.
	Suppressed bool `msgpack:"suppressed,omitempty" json:"suppressed,omitempty"`
	// Weight is the framework's weight among its role's frameworks; 0 means 1.
	Weight float64 `msgpack:"weight,omitempty" json:"weight,omitempty"`
	// Nonce identifies one registration of a new framework (no
	// FrameworkID): a subscribe sent again with the same nonce and
	// principal, because the reply to the first was lost, gets the
	// framework the first one registered instead of a second one.
	Nonce string `msgpack:"nonce,omitempty" json:"nonce,omitempty"`
	// Session is the framework session the scheduler holds, from its last
	// SubscribeReply; 0 takes the framework over from whichever scheduler
	// holds it (a scheduler restarted with its framework ID). A session
	// that is no longer the framework's is refused with ErrFailedOver.
	Session uint64 `msgpack:"session,omitempty" json:"session,omitempty"`
	// Instance identifies the scheduler process (one random value per
	// driver), so a subscribe it sends again is not taken for a takeover.
	Instance string `msgpack:"instance,omitempty" json:"instance,omitempty"`
	// User is the Unix user the framework's tasks run as when a task
	// names none (Mesos's FrameworkInfo.user); empty: the agents' default
	// task user. The masters' run-as ACLs say which users a principal may
	// name.
	User string `msgpack:"user,omitempty" json:"user,omitempty"`
	// Resume, on a subscribe with a FrameworkID, restores in the same step
	// the soft state a new leader does not hold (the declared demand, the
	// refusals in force), and a subscribe that is not Suppressed opens its
	// offers at once: the framework already listens on its events. A
	// driver back after a failover is offered resources one subscribe
	// after it hears of the new leader, not three calls after.
	Resume *SubscribeResume `msgpack:"resume,omitempty" json:"resume,omitempty"`
}

// SubscribeResume is the soft state a framework subscribing again restores
// with its subscribe (SubscribeRequest.Resume).
type SubscribeResume struct {
	// Demand is the framework's declared demand; nil when it declared none.
	Demand *DemandRequest `msgpack:"demand,omitempty" json:"demand,omitempty"`
	// Refusals are the decline filters still in force, as ReviveRequest's.
	Refusals []AgentRefusal `msgpack:"refuse,omitempty" json:"refusals,omitempty"`
}

// validate checks the resume of framework id's subscribe.
func (r SubscribeResume) validate(id FrameworkID) error {
	if id == "" {
		return Errorf(ErrInvalidArgument, "resume without a framework_id")
	}
	if r.Demand != nil {
		if r.Demand.FrameworkID != id {
			return Errorf(ErrInvalidArgument, "resume: demand of framework %q in the subscribe of %q",
				truncate(string(r.Demand.FrameworkID)), truncate(string(id)))
		}
		if err := r.Demand.Validate(); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	if err := checkRefusals(r.Refusals); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	return nil
}

// HasCapability reports whether the request declares capability c.
func (r SubscribeRequest) HasCapability(c string) bool { return slices.Contains(r.Capabilities, c) }

// Validate checks IDs, name, role, timeout, capabilities and weight.
func (r SubscribeRequest) Validate() error {
	if err := checkOptionalID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkRequired("name", r.Name, MaxNameLen); err != nil {
		return err
	}
	if err := checkText("principal", r.Principal, MaxNameLen); err != nil {
		return err
	}
	if err := checkText("nonce", r.Nonce, MaxNameLen); err != nil {
		return err
	}
	if err := checkText("instance", r.Instance, MaxNameLen); err != nil {
		return err
	}
	if err := checkUser("user", r.User); err != nil {
		return err
	}
	if r.FrameworkID == "" && r.Session != 0 {
		return Errorf(ErrInvalidArgument, "session %d without a framework_id", r.Session)
	}
	if !ValidRole(r.Role) {
		return Errorf(ErrInvalidArgument, "role %q is not a role path", truncate(r.Role))
	}
	if err := checkNonNegative("failover_timeout", r.FailoverTimeout); err != nil {
		return err
	}
	if err := checkLen("capabilities", len(r.Capabilities), 32); err != nil {
		return err
	}
	for _, c := range r.Capabilities {
		if err := checkRequired("capability", c, MaxNameLen); err != nil {
			return err
		}
	}
	if err := checkFloat("weight", r.Weight, maxWeight); err != nil {
		return err
	}
	if r.Resume != nil {
		return r.Resume.validate(r.FrameworkID)
	}
	return nil
}

// SubscribeReply answers a successful subscribe.
type SubscribeReply struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	// LeaderID is the Raft ID of the master that answered.
	LeaderID string `msgpack:"leader" json:"leader_id"`
	// HeartbeatInterval is how often the leader sends HeartbeatEvent; the
	// SDK treats a few missed beats as a disconnect. Nanoseconds on the wire.
	HeartbeatInterval time.Duration `msgpack:"hb" json:"heartbeat_interval"`
	// FilesToken reads the framework's sandboxes on the agents' file
	// servers (FrameworkFilesToken) until it expires; heartbeats bring
	// fresh ones. Empty when the master has no files secret configured.
	FilesToken string `msgpack:"files,omitempty" json:"files_token,omitempty"`
	// Session is the framework session this scheduler now holds. It
	// changes only when another scheduler takes the framework over.
	Session uint64 `msgpack:"session,omitempty" json:"session,omitempty"`
	// Resumed says the leader applied the request's Resume. When it did
	// not (a demand its allocator refuses, or a master that knows no
	// Resume), the framework is left suppressed and the driver restores
	// its state by a demand call and a revive, as for a new framework.
	Resumed bool `msgpack:"resumed,omitempty" json:"resumed,omitempty"`
}

// TeardownRequest removes the framework and kills all its tasks.
type TeardownRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
}

// Validate checks the framework ID.
func (r TeardownRequest) Validate() error { return checkID("framework_id", r.FrameworkID) }

// SuppressRequest stops offers to the framework until Revive.
type SuppressRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
}

// Validate checks the framework ID.
func (r SuppressRequest) Validate() error { return checkID("framework_id", r.FrameworkID) }

// ReviveRequest resumes offers to the framework and clears its decline
// filters.
type ReviveRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	// Refusals are decline filters set again right after the revive
	// clears the framework's filters: a driver that subscribes again to a
	// new leader (which knows none of them) restores the ones still in
	// force this way.
	Refusals []AgentRefusal `msgpack:"refuse,omitempty" json:"refusals,omitempty"`
}

// AgentRefusal refuses an agent's resources to a framework for Seconds.
type AgentRefusal struct {
	AgentID AgentID `msgpack:"ag" json:"agent_id"`
	Seconds float64 `msgpack:"s" json:"seconds"`
}

// Validate checks the framework ID and the refusals.
func (r ReviveRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	return checkRefusals(r.Refusals)
}

// checkRefusals checks a list of refusals: its length, IDs and durations.
func checkRefusals(refusals []AgentRefusal) error {
	if len(refusals) > MaxListLen {
		return Errorf(ErrInvalidArgument, "%d refusals, limit %d", len(refusals), MaxListLen)
	}
	for _, f := range refusals {
		if err := checkID("agent_id", f.AgentID); err != nil {
			return err
		}
		if err := checkFloat("seconds", f.Seconds, MaxRefuseSeconds); err != nil {
			return err
		}
	}
	return nil
}

// KillRequest asks for one task to be killed. The outcome arrives as a
// status update (KILLED, or LOST for a task the master does not know).
type KillRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	TaskID      TaskID      `msgpack:"tid" json:"task_id"`
	// AgentID, when set, names the task's agent (helps for unknown tasks).
	AgentID AgentID `msgpack:"ag,omitempty" json:"agent_id,omitempty"`
	// GracePeriod overrides the task's KillGracePeriod when positive.
	GracePeriod time.Duration `msgpack:"grace,omitempty" json:"grace_period,omitempty"`
}

// Validate checks IDs and the grace period.
func (r KillRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkID("task_id", r.TaskID); err != nil {
		return err
	}
	if err := checkOptionalID("agent_id", r.AgentID); err != nil {
		return err
	}
	return checkNonNegative("grace_period", r.GracePeriod)
}

// ReconcileTask names one task to reconcile.
type ReconcileTask struct {
	TaskID  TaskID  `msgpack:"tid" json:"task_id"`
	AgentID AgentID `msgpack:"ag,omitempty" json:"agent_id,omitempty"`
}

// ReconcileRequest asks the master to resend the latest state of the listed
// tasks (explicit) or of all the framework's tasks (implicit, empty Tasks)
// as status updates with ReasonReconciliation. Tasks it does not know come
// back LOST with ReasonTaskUnknown.
type ReconcileRequest struct {
	FrameworkID FrameworkID     `msgpack:"fw" json:"framework_id"`
	Tasks       []ReconcileTask `msgpack:"tasks,omitempty" json:"tasks,omitempty"`
}

// Validate checks IDs and the list length.
func (r ReconcileRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkLen("tasks", len(r.Tasks), MaxListLen); err != nil {
		return err
	}
	for _, t := range r.Tasks {
		if err := checkID("task_id", t.TaskID); err != nil {
			return err
		}
		if err := checkOptionalID("agent_id", t.AgentID); err != nil {
			return err
		}
	}
	return nil
}

// AcknowledgeRequest acknowledges a batch of status updates, so the master
// stops resending them.
type AcknowledgeRequest struct {
	FrameworkID FrameworkID       `msgpack:"fw" json:"framework_id"`
	Acks        []Acknowledgement `msgpack:"acks" json:"acks"`
}

// Acknowledgement names one status update a framework received.
type Acknowledgement struct {
	AgentID AgentID    `msgpack:"ag,omitempty" json:"agent_id,omitempty"`
	TaskID  TaskID     `msgpack:"tid" json:"task_id"`
	UUID    StatusUUID `msgpack:"uuid" json:"uuid"`
}

// Validate checks the IDs and the batch size.
func (r AcknowledgeRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if len(r.Acks) == 0 {
		return Errorf(ErrInvalidArgument, "acknowledge request without acknowledgements")
	}
	if err := checkLen("acks", len(r.Acks), MaxStatusBatch); err != nil {
		return err
	}
	for i, a := range r.Acks {
		if err := checkOptionalID("agent_id", a.AgentID); err != nil {
			return fmt.Errorf("acks[%d]: %w", i, err)
		}
		if err := checkID("task_id", a.TaskID); err != nil {
			return fmt.Errorf("acks[%d]: %w", i, err)
		}
		if err := checkID("uuid", a.UUID); err != nil {
			return fmt.Errorf("acks[%d]: %w", i, err)
		}
	}
	return nil
}

// AcknowledgeReply answers an AcknowledgeRequest: every acknowledgement not
// listed in Refused was recorded. A refused one is stale (a later update
// superseded it) or names a task the master does not hold; neither needs a
// retry.
type AcknowledgeReply struct {
	Refused []Refusal `msgpack:"r,omitempty" json:"refused,omitempty"`
}
