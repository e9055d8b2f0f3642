package protocol

import "fmt"

// OperationType says what an accept operation does with the offers.
type OperationType string

// Operation types.
const (
	// OperationLaunch launches each task independently.
	OperationLaunch OperationType = "launch"
	// OperationLaunchGroup launches the tasks all or nothing, on one agent.
	OperationLaunchGroup OperationType = "launch_group"
)

// Operation is one step of an accept.
type Operation struct {
	Type  OperationType `msgpack:"type" json:"type"`
	Tasks []TaskInfo    `msgpack:"tasks" json:"tasks"`
	// GroupID names the group of a launch_group; each task's GroupID must be
	// empty or equal to it.
	GroupID string `msgpack:"gid,omitempty" json:"group_id,omitempty"`
}

// Validate checks the operation's type, group and tasks.
func (o Operation) Validate() error {
	switch o.Type {
	case OperationLaunch:
		if o.GroupID != "" {
			return Errorf(ErrInvalidArgument, "launch with group_id %q", truncate(o.GroupID))
		}
	case OperationLaunchGroup:
		if err := checkID("group_id", o.GroupID); err != nil {
			return err
		}
	default:
		return Errorf(ErrInvalidArgument, "unknown operation %q", truncate(string(o.Type)))
	}
	if len(o.Tasks) == 0 {
		return Errorf(ErrInvalidArgument, "%s without tasks", o.Type)
	}
	if err := checkLen("tasks", len(o.Tasks), MaxTasksPerAccept); err != nil {
		return err
	}
	for _, t := range o.Tasks {
		if err := t.Validate(); err != nil {
			return err
		}
		if o.Type == OperationLaunchGroup && t.GroupID != "" && t.GroupID != o.GroupID {
			return Errorf(ErrInvalidArgument, "task %s group_id %q differs from %q", t.TaskID, t.GroupID, o.GroupID)
		}
	}
	return nil
}

// Filters qualify a decline (or the unused part of an accept).
type Filters struct {
	// RefuseSeconds is how long the master will not re-offer the declined
	// agent's resources to this framework; 0 installs no filter.
	RefuseSeconds float64 `msgpack:"refuse" json:"refuse_seconds"`
}

// Validate checks that RefuseSeconds is in [0, MaxRefuseSeconds].
func (f Filters) Validate() error {
	return checkFloat("refuse_seconds", f.RefuseSeconds, MaxRefuseSeconds)
}

// AcceptRequest uses offers: it runs Operations on the offered resources
// and returns whatever they do not use. Filters, when given, refuse the
// agent's resources to the framework for RefuseSeconds once the operations
// leave part of the offers unused; nil refuses nothing, so the remainder is
// offered again at once (Mesos filters it for 5 s by default, but here
// frameworks declare their demand and offers follow it). An accept with no
// operations declines the offers, and then nil Filters mean the master's
// default refuse filter. The leader re-validates every accept against its offer book;
// a stale one fails with ErrOfferRescinded or ErrUnknownOffer.
type AcceptRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	OfferIDs    []OfferID   `msgpack:"ofs" json:"offer_ids"`
	Operations  []Operation `msgpack:"ops,omitempty" json:"operations,omitempty"`
	Filters     *Filters    `msgpack:"filters,omitempty" json:"filters,omitempty"`
}

// Validate checks IDs, list lengths (at most MaxOffersPerRequest offers and
// MaxTasksPerAccept tasks), every operation, and that task IDs are unique
// within the request.
func (r AcceptRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkOfferIDs(r.OfferIDs); err != nil {
		return err
	}
	if err := checkLen("operations", len(r.Operations), MaxTasksPerAccept); err != nil {
		return err
	}
	total := 0
	for _, o := range r.Operations {
		total += len(o.Tasks)
	}
	if err := checkLen("tasks", total, MaxTasksPerAccept); err != nil {
		return err
	}
	seen := make(map[TaskID]struct{}, total)
	for i, o := range r.Operations {
		if err := o.Validate(); err != nil {
			return fmt.Errorf("operations[%d]: %w", i, err)
		}
		for _, t := range o.Tasks {
			if _, dup := seen[t.TaskID]; dup {
				return Errorf(ErrDuplicate, "task %s launched twice", t.TaskID)
			}
			seen[t.TaskID] = struct{}{}
		}
	}
	if r.Filters != nil {
		return r.Filters.Validate()
	}
	return nil
}

// DeclineRequest returns offers unused, on one agent or many. With Leftover
// the resources go to the leftover pool for other frameworks (Carbyne
// altruism) and no refuse filter is installed unless Filters says so;
// otherwise Filters (nil means the master's default) applies to every agent
// the offers are on. One unknown offer fails the whole request.
type DeclineRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	OfferIDs    []OfferID   `msgpack:"ofs" json:"offer_ids"`
	Filters     *Filters    `msgpack:"filters,omitempty" json:"filters,omitempty"`
	Leftover    bool        `msgpack:"leftover,omitempty" json:"leftover,omitempty"`
}

// Validate checks IDs, the offer list and the filters.
func (r DeclineRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkOfferIDs(r.OfferIDs); err != nil {
		return err
	}
	if r.Filters != nil {
		return r.Filters.Validate()
	}
	return nil
}

// checkOfferIDs requires 1 to MaxOffersPerRequest distinct valid offer IDs.
func checkOfferIDs(ids []OfferID) error {
	if len(ids) == 0 {
		return Errorf(ErrInvalidArgument, "no offer ids")
	}
	if err := checkLen("offer_ids", len(ids), MaxOffersPerRequest); err != nil {
		return err
	}
	seen := make(map[OfferID]struct{}, len(ids))
	for _, id := range ids {
		if err := checkID("offer_id", id); err != nil {
			return err
		}
		if _, dup := seen[id]; dup {
			return Errorf(ErrDuplicate, "offer %s named twice", id)
		}
		seen[id] = struct{}{}
	}
	return nil
}
