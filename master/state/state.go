package state

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// State is the replicated data model: roles, agents, frameworks and tasks,
// changed only by Apply. It is safe for concurrent use: Apply and
// RestoreFrom serialize on a mutex, and Snapshot takes it only to copy a
// few words. The zero value is not usable; call New.
type State struct {
	mu  sync.Mutex
	cur View
}

// New returns an empty State at index 0.
func New() *State { return &State{} }

// Snapshot returns a read-only view of the state as of the last applied
// command. It costs O(1) and shares every object with the State; later
// applies never change the View.
func (s *State) Snapshot() *View {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.cur
	return &v
}

// Index returns the Raft index of the last applied command.
func (s *State) Index() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.index
}

// Apply applies one command (a CmdType byte and a msgpack body, see Encode)
// logged at Raft index index, and returns the command's result (documented
// on each command struct) or its error.
//
//   - A domain error (an unknown framework, a duplicate ID, an invalid
//     field, ...) wraps a protocol sentinel; the state is unchanged except
//     that Index advances, since the entry was applied.
//   - A body that does not decode, or an unknown type without
//     IgnoreUnknownFlag, returns an error wrapping ErrCorrupt and changes
//     nothing, not even Index: the log is corrupt and the caller must stop.
//   - An unknown type with IgnoreUnknownFlag is skipped: the result and
//     error are nil and Index advances.
//
// Apply is deterministic: it reads no clock and no randomness, and its
// results do not depend on map order. Several commands may share an index
// (a Raft entry that batches commands); index must not decrease.
func (s *State) Apply(index uint64, cmd []byte) (result any, err error) {
	if len(cmd) == 0 {
		return nil, fmt.Errorf("%w: empty command at index %d", ErrCorrupt, index)
	}
	t, body := CmdType(cmd[0]), cmd[1:]
	s.mu.Lock()
	defer s.mu.Unlock()
	saved := s.cur
	s.cur.beginEdit()
	switch t &^ IgnoreUnknownFlag {
	case CmdSetRole:
		result, err = s.applySetRole(index, body)
	case CmdRemoveRole:
		result, err = s.applyRemoveRole(index, body)
	case CmdRegisterFramework:
		result, err = s.applyRegisterFramework(index, body)
	case CmdSetFrameworkConnected:
		result, err = s.applySetFrameworkConnected(index, body)
	case CmdSetFrameworkSuppressed:
		result, err = s.applySetFrameworkSuppressed(index, body)
	case CmdRemoveFramework:
		result, err = s.applyRemoveFramework(index, body)
	case CmdRegisterAgent:
		result, err = s.applyRegisterAgent(index, body)
	case CmdReregisterAgent:
		result, err = s.applyReregisterAgent(index, body)
	case CmdSetAgentState:
		result, err = s.applySetAgentState(index, body)
	case CmdRemoveAgent:
		result, err = s.applyRemoveAgent(index, body)
	case CmdLaunchTasks:
		result, err = s.applyLaunchTasks(index, body)
	case CmdUpdateTaskStatus:
		result, err = s.applyUpdateTaskStatus(index, body)
	case CmdAcknowledgeStatus:
		result, err = s.applyAcknowledgeStatus(index, body)
	case CmdMarkAgentTasks:
		result, err = s.applyMarkAgentTasks(index, body)
	case CmdMarkAgentsSilent:
		result, err = s.applyMarkAgentsSilent(index, body)
	case CmdStorePut:
		result, err = s.applyStorePut(index, body)
	case CmdStoreDelete:
		result, err = s.applyStoreDelete(index, body)
	default:
		if t&IgnoreUnknownFlag == 0 {
			return nil, fmt.Errorf("%w: unknown command type %s at index %d", ErrCorrupt, t, index)
		}
	}
	if err != nil {
		// Every applyX validates before it writes, so this only undoes
		// writes if one forgot; it costs a struct copy.
		s.cur = saved
		if errors.Is(err, ErrCorrupt) {
			return nil, fmt.Errorf("%w at index %d", err, index)
		}
		s.cur.index = index
		return nil, err
	}
	s.cur.index = index
	return result, nil
}

// RestoreFrom replaces the state with a snapshot read from r (see Restore).
// On error the state is unchanged.
func (s *State) RestoreFrom(r io.Reader) error {
	ns, err := Restore(r)
	if err != nil {
		return err
	}
	v := ns.Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = *v
	return nil
}

// decode decodes body into v for command t, wrapping failures in ErrCorrupt.
func decode(t CmdType, body []byte, v any) error {
	if err := decodeBody(body, v); err != nil {
		return fmt.Errorf("%w: decode %s: %v", ErrCorrupt, t, err)
	}
	return nil
}
