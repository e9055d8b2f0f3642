package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// RegisterFramework adds a framework (Resubscribe false: the leader just
// assigned ID) or re-subscribes an existing one after a disconnect or a
// scheduler failover (Resubscribe true). Either way the framework is
// connected afterwards. A re-subscription replaces the name, role, weight,
// failover timeout, capabilities and suppression, keeps RegisteredAt and
// the tasks, and may not change the principal.
//
// Sessions fence schedulers: a re-subscription from the holder's instance
// keeps the session; one with Session 0 from another instance takes the
// framework over (the session goes up by one and the old holder is fenced
// off); one from another instance naming any other session than the
// current is refused. Subscribers that name no instance neither fence nor
// are fenced.
// Apply result: the stored *Framework.
// Errors: ErrDuplicate (new, but ID exists), ErrUnknownFramework
// (re-subscribe, but ID unknown), ErrUnauthorized (principal changed),
// ErrFailedOver (a session that is no longer the framework's),
// ErrInvalidArgument.
type RegisterFramework struct {
	ID        protocol.FrameworkID `msgpack:"id"`
	Name      string               `msgpack:"name"`
	Principal string               `msgpack:"principal,omitempty"`
	Role      string               `msgpack:"role"`
	// Weight 0 means 1.
	Weight          float64       `msgpack:"w,omitempty"`
	FailoverTimeout time.Duration `msgpack:"failover,omitempty"`
	Capabilities    []string      `msgpack:"caps,omitempty"`
	Suppressed      bool          `msgpack:"supp,omitempty"`
	Resubscribe     bool          `msgpack:"resub,omitempty"`
	// Nonce, on a new registration, makes it idempotent: when a framework
	// registered with the same nonce and principal exists, the command
	// changes nothing and returns that framework.
	Nonce string `msgpack:"nonce,omitempty"`
	// Session is the session the subscriber holds (0: take over); Instance
	// identifies the subscriber.
	Session  uint64 `msgpack:"sess,omitempty"`
	Instance string `msgpack:"inst,omitempty"`
	// User is the default user of the framework's tasks.
	User string `msgpack:"user,omitempty"`
	Time int64  `msgpack:"time"`
}

// SetFrameworkConnected records that a framework connected (DisconnectedAt
// cleared) or disconnected at Time (DisconnectedAt = Time). Disconnecting
// a framework that is already disconnected keeps the earlier time, so its
// failover timer is not restarted. Apply result: the stored *Framework.
type SetFrameworkConnected struct {
	FrameworkID protocol.FrameworkID `msgpack:"fw"`
	Connected   bool                 `msgpack:"conn"`
	Time        int64                `msgpack:"time"`
}

// SetFrameworkSuppressed suppresses (true) or revives (false) offers to a
// framework. Apply result: the stored *Framework.
type SetFrameworkSuppressed struct {
	FrameworkID protocol.FrameworkID `msgpack:"fw"`
	Suppressed  bool                 `msgpack:"supp"`
}

// RemoveFramework removes a framework (teardown, or failover timeout) and
// all its tasks, whatever their state: no one is left to acknowledge them.
// The leader tells the agents to kill the ones that were not terminal.
// The framework, its completed history and the removed tasks move to the
// completed frameworks (see View.CompletedFrameworks).
// Apply result: RemoveFrameworkResult.
type RemoveFramework struct {
	FrameworkID protocol.FrameworkID `msgpack:"fw"`
}

// RemoveFrameworkResult lists the tasks RemoveFramework removed, sorted.
type RemoveFrameworkResult struct {
	Framework *Framework
	Tasks     []*Task
}

func (c *RegisterFramework) validate() error {
	if err := checkID("framework_id", c.ID); err != nil {
		return err
	}
	req := protocol.SubscribeRequest{
		FrameworkID: c.ID, Name: c.Name, Principal: c.Principal, Role: c.Role,
		FailoverTimeout: c.FailoverTimeout, Capabilities: c.Capabilities,
		Suppressed: c.Suppressed, Weight: c.Weight, Session: c.Session, Instance: c.Instance, User: c.User,
	}
	if err := req.Validate(); err != nil {
		return err
	}
	return checkTime("time", c.Time)
}

func (s *State) applyRegisterFramework(_ uint64, body []byte) (any, error) {
	var c RegisterFramework
	if err := decode(CmdRegisterFramework, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("register framework: %w", err)
	}
	if !c.Resubscribe && c.Nonce != "" {
		var same *Framework
		s.cur.frameworks.ascend("", "", func(_ string, f *Framework) bool {
			if f.Nonce == c.Nonce && f.Principal == c.Principal {
				same = f
			}
			return same == nil
		})
		if same != nil {
			return same, nil
		}
	}
	old, exists := s.cur.frameworks.get(string(c.ID))
	switch {
	case !c.Resubscribe && exists:
		return nil, errorf(protocol.ErrDuplicate, "register framework %s", c.ID)
	case c.Resubscribe && !exists:
		return nil, errorf(protocol.ErrUnknownFramework, "resubscribe framework %s", c.ID)
	case exists && old.Principal != c.Principal:
		return nil, errorf(protocol.ErrUnauthorized, "resubscribe framework %s: principal %q, registered as %q",
			c.ID, clip(c.Principal), old.Principal)
	case exists && c.Session != 0 && c.Session != old.Session && c.Instance != old.Instance:
		return nil, errorf(protocol.ErrFailedOver, "resubscribe framework %s with session %d: session %d holds it",
			c.ID, c.Session, old.Session)
	}
	caps := slices.Clone(c.Capabilities)
	slices.Sort(caps)
	f := &Framework{
		ID: c.ID, Name: c.Name, Principal: c.Principal, Role: c.Role, Weight: c.Weight,
		FailoverTimeout: c.FailoverTimeout, Capabilities: slices.Compact(caps),
		Connected: true, RegisteredAt: c.Time, Suppressed: c.Suppressed, Nonce: c.Nonce, User: c.User,
	}
	if f.Weight == 0 {
		f.Weight = 1
	}
	f.Session, f.Instance = 1, c.Instance
	if exists {
		f.RegisteredAt, f.Nonce, f.Session, f.Instance = old.RegisteredAt, old.Nonce, old.Session, old.Instance
		if c.Instance != "" && c.Instance != old.Instance {
			if c.Session == 0 {
				f.Session++ // a takeover
			}
			f.Instance = c.Instance
		}
	}
	s.cur.frameworks = s.cur.frameworks.set(string(f.ID), f)
	return f, nil
}

func (s *State) applySetFrameworkConnected(_ uint64, body []byte) (any, error) {
	var c SetFrameworkConnected
	if err := decode(CmdSetFrameworkConnected, body, &c); err != nil {
		return nil, err
	}
	if err := checkTime("time", c.Time); err != nil {
		return nil, fmt.Errorf("set framework connected: %w", err)
	}
	old, err := s.framework("set framework connected", c.FrameworkID)
	if err != nil {
		return nil, err
	}
	f := *old
	switch {
	case c.Connected:
		f.Connected, f.DisconnectedAt = true, 0
	case old.Connected:
		f.Connected, f.DisconnectedAt = false, c.Time
	}
	s.cur.frameworks = s.cur.frameworks.set(string(f.ID), &f)
	return &f, nil
}

func (s *State) applySetFrameworkSuppressed(_ uint64, body []byte) (any, error) {
	var c SetFrameworkSuppressed
	if err := decode(CmdSetFrameworkSuppressed, body, &c); err != nil {
		return nil, err
	}
	old, err := s.framework("set framework suppressed", c.FrameworkID)
	if err != nil {
		return nil, err
	}
	f := *old
	f.Suppressed = c.Suppressed
	s.cur.frameworks = s.cur.frameworks.set(string(f.ID), &f)
	return &f, nil
}

func (s *State) applyRemoveFramework(_ uint64, body []byte) (any, error) {
	var c RemoveFramework
	if err := decode(CmdRemoveFramework, body, &c); err != nil {
		return nil, err
	}
	f, err := s.framework("remove framework", c.FrameworkID)
	if err != nil {
		return nil, err
	}
	tasks := s.cur.TasksByFramework(f.ID)
	for _, t := range tasks {
		s.cur.deleteTask(t)
	}
	s.cur.frameworks = s.cur.frameworks.delete(string(f.ID))
	s.cur.completeFramework(f, tasks)
	return RemoveFrameworkResult{Framework: f, Tasks: tasks}, nil
}

// framework returns the framework id or an ErrUnknownFramework error
// prefixed with op.
func (s *State) framework(op string, id protocol.FrameworkID) (*Framework, error) {
	if err := checkID("framework_id", id); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	f, ok := s.cur.frameworks.get(string(id))
	if !ok {
		return nil, errorf(protocol.ErrUnknownFramework, "%s %s", op, id)
	}
	return f, nil
}
