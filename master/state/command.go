package state

import (
	"fmt"
	"reflect"
	"strconv"
)

// CmdType is the first byte of a command: it says which struct the msgpack
// body holds. Values are never renumbered or reused.
type CmdType uint8

// IgnoreUnknownFlag marks a command that a State which does not know its
// type may skip instead of failing on, so that a newer leader can log
// optional commands during a rolling upgrade. Known types are applied
// whether or not the flag is set.
const IgnoreUnknownFlag CmdType = 0x80

// Command types. 0 is never valid.
const (
	CmdSetRole                CmdType = 1
	CmdRemoveRole             CmdType = 2
	CmdRegisterFramework      CmdType = 3
	CmdSetFrameworkConnected  CmdType = 4
	CmdSetFrameworkSuppressed CmdType = 5
	CmdRemoveFramework        CmdType = 6
	CmdRegisterAgent          CmdType = 7
	CmdReregisterAgent        CmdType = 8
	CmdSetAgentState          CmdType = 9
	CmdRemoveAgent            CmdType = 10
	CmdLaunchTasks            CmdType = 11
	CmdUpdateTaskStatus       CmdType = 12
	CmdAcknowledgeStatus      CmdType = 13
	CmdMarkAgentTasks         CmdType = 14
	CmdMarkAgentsSilent       CmdType = 15
	CmdStorePut               CmdType = 16
	CmdStoreDelete            CmdType = 17
)

// commands maps each type to its name and a constructor of its body.
var commands = map[CmdType]struct {
	name string
	new  func() any
}{
	CmdSetRole:                {"SetRole", func() any { return new(SetRole) }},
	CmdRemoveRole:             {"RemoveRole", func() any { return new(RemoveRole) }},
	CmdRegisterFramework:      {"RegisterFramework", func() any { return new(RegisterFramework) }},
	CmdSetFrameworkConnected:  {"SetFrameworkConnected", func() any { return new(SetFrameworkConnected) }},
	CmdSetFrameworkSuppressed: {"SetFrameworkSuppressed", func() any { return new(SetFrameworkSuppressed) }},
	CmdRemoveFramework:        {"RemoveFramework", func() any { return new(RemoveFramework) }},
	CmdRegisterAgent:          {"RegisterAgent", func() any { return new(RegisterAgent) }},
	CmdReregisterAgent:        {"ReregisterAgent", func() any { return new(ReregisterAgent) }},
	CmdSetAgentState:          {"SetAgentState", func() any { return new(SetAgentState) }},
	CmdRemoveAgent:            {"RemoveAgent", func() any { return new(RemoveAgent) }},
	CmdLaunchTasks:            {"LaunchTasks", func() any { return new(LaunchTasks) }},
	CmdUpdateTaskStatus:       {"UpdateTaskStatus", func() any { return new(UpdateTaskStatus) }},
	CmdAcknowledgeStatus:      {"AcknowledgeStatus", func() any { return new(AcknowledgeStatus) }},
	CmdMarkAgentTasks:         {"MarkAgentTasks", func() any { return new(MarkAgentTasks) }},
	CmdMarkAgentsSilent:       {"MarkAgentsSilent", func() any { return new(MarkAgentsSilent) }},
	CmdStorePut:               {"StorePut", func() any { return new(StorePut) }},
	CmdStoreDelete:            {"StoreDelete", func() any { return new(StoreDelete) }},
}

// cmdByGo maps each command struct type to its CmdType.
var cmdByGo = func() map[reflect.Type]CmdType {
	m := make(map[reflect.Type]CmdType, len(commands))
	for t, c := range commands {
		m[reflect.TypeOf(c.new()).Elem()] = t
	}
	return m
}()

// String returns the command's name, with a "+ignorable" suffix when the
// flag is set, or its number when the type is unknown.
func (t CmdType) String() string {
	suffix := ""
	if t&IgnoreUnknownFlag != 0 {
		suffix = "+ignorable"
	}
	if c, ok := commands[t&^IgnoreUnknownFlag]; ok {
		return c.name + suffix
	}
	return "CmdType(" + strconv.Itoa(int(t&^IgnoreUnknownFlag)) + ")" + suffix
}

// Known reports whether this build knows t, ignoring IgnoreUnknownFlag.
func (t CmdType) Known() bool {
	_, ok := commands[t&^IgnoreUnknownFlag]
	return ok
}

// CmdTypes returns every known command type in numeric order.
func CmdTypes() []CmdType {
	var out []CmdType
	for t := CmdType(1); t < IgnoreUnknownFlag; t++ {
		if t.Known() {
			out = append(out, t)
		}
	}
	return out
}

// Encode returns the command t with body: one type byte, then body as
// msgpack (compact integers, sorted map keys, so the bytes are stable).
// body must be t's struct or a non-nil pointer to it; t may carry
// IgnoreUnknownFlag. Encode does not validate the body: Apply does.
func Encode(t CmdType, body any) ([]byte, error) {
	if !t.Known() {
		return nil, fmt.Errorf("encode %s: unknown command type", t)
	}
	rv := reflect.ValueOf(body)
	bt, ok := cmdTypeOf(body)
	if !ok || bt != t&^IgnoreUnknownFlag || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, fmt.Errorf("encode %s: body is %T", t, body)
	}
	b, err := marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", t, err)
	}
	return append([]byte{byte(t)}, b...), nil
}

// Decode splits a command into its type and a pointer to its decoded body
// struct, e.g. *LaunchTasks. It never panics. It returns an error wrapping
// ErrCorrupt for an empty command, an unknown type (flagged or not) and a
// body that does not decode.
func Decode(cmd []byte) (CmdType, any, error) {
	if len(cmd) == 0 {
		return 0, nil, fmt.Errorf("%w: empty command", ErrCorrupt)
	}
	t := CmdType(cmd[0])
	c, ok := commands[t&^IgnoreUnknownFlag]
	if !ok {
		return t, nil, fmt.Errorf("%w: unknown command type %s", ErrCorrupt, t)
	}
	v := c.new()
	if err := decodeBody(cmd[1:], v); err != nil {
		return t, nil, fmt.Errorf("%w: decode %s: %v", ErrCorrupt, t, err)
	}
	return t, v, nil
}

func cmdTypeOf(body any) (CmdType, bool) {
	rt := reflect.TypeOf(body)
	if rt == nil {
		return 0, false
	}
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	t, ok := cmdByGo[rt]
	return t, ok
}
