package state

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestState_Apply_corrupt(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	valid, err := Encode(CmdSetRole, &SetRole{Path: "x", Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cmd  []byte
	}{
		{"empty", nil},
		{"type zero", []byte{0, 0x80}},
		{"unknown type", []byte{0x42, 0x80}},
		{"unknown type without body", []byte{0x7f}},
		{"flagged known type with bad body", []byte{byte(CmdSetRole | IgnoreUnknownFlag), 0xc1}},
		{"truncated body", valid[:len(valid)-1]},
		{"trailing bytes", append(bytes.Clone(valid), 0)},
		{"body not a map", []byte{byte(CmdSetRole), 0x01}},
		{"no body", []byte{byte(CmdSetRole)}},
		{"wrong field type", append([]byte{byte(CmdSetRole)}, 0x81, 0xa4, 'p', 'a', 't', 'h', 0x05)},
		{"forged array length", append([]byte{byte(CmdLaunchTasks)}, 0x81, 0xa5, 't', 'a', 's', 'k', 's', 0xdd, 0xff, 0xff, 0xff, 0xff)},
	}
	for _, typ := range CmdTypes() {
		cases = append(cases, struct {
			name string
			cmd  []byte
		}{typ.String() + " garbage body", []byte{byte(typ), 0xc1, 0x00}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, idx := dataBytes(t, h.s), h.s.Index()
			res, err := h.s.Apply(idx+1, tc.cmd)
			if !errors.Is(err, ErrCorrupt) || res != nil {
				t.Fatalf("got %v, %v, want nil, ErrCorrupt", res, err)
			}
			if !bytes.Equal(dataBytes(t, h.s), before) || h.s.Index() != idx {
				t.Error("a corrupt command changed the state or the index")
			}
		})
	}
}

func TestState_Apply_ignoreUnknownFlag(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	before := dataBytes(t, h.s)
	for i, cmd := range [][]byte{
		{byte(0x42 | IgnoreUnknownFlag), 0x80},
		{byte(0x7f | IgnoreUnknownFlag), 0xc1, 0xc1}, // not even decoded
		{byte(IgnoreUnknownFlag)},
	} {
		index := uint64(100 + i)
		res, err := h.s.Apply(index, cmd)
		if err != nil || res != nil {
			t.Fatalf("got %v, %v, want nil, nil", res, err)
		}
		if got := h.s.Index(); got != index {
			t.Errorf("got index %d, want %d", got, index)
		}
	}
	if !bytes.Equal(dataBytes(t, h.s), before) {
		t.Error("a skipped command changed the state")
	}
	// A flagged type this build knows is applied.
	cmd, err := Encode(CmdSetRole|IgnoreUnknownFlag, &SetRole{Path: "new", Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.Apply(200, cmd); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.view().Role("new"); !ok {
		t.Error("flagged known command was not applied")
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	body := &SetFrameworkSuppressed{FrameworkID: "fw-1", Suppressed: true}
	cmd, err := Encode(CmdSetFrameworkSuppressed, body)
	if err != nil {
		t.Fatal(err)
	}
	if cmd[0] != byte(CmdSetFrameworkSuppressed) {
		t.Errorf("got type byte %d, want %d", cmd[0], CmdSetFrameworkSuppressed)
	}
	typ, got, err := Decode(cmd)
	if err != nil || typ != CmdSetFrameworkSuppressed || !reflect.DeepEqual(got, body) {
		t.Errorf("Decode: got %s %+v %v, want %+v", typ, got, err, body)
	}
	byValue, err := Encode(CmdSetFrameworkSuppressed, *body)
	if err != nil || !bytes.Equal(byValue, cmd) {
		t.Errorf("encode by value: got %x %v, want %x", byValue, err, cmd)
	}
	var nilBody *SetRole
	for _, tc := range []struct {
		name string
		typ  CmdType
		body any
	}{
		{"unknown type", 0x42, body},
		{"zero type", 0, body},
		{"wrong body", CmdSetRole, body},
		{"nil body", CmdSetRole, nil},
		{"nil pointer", CmdSetRole, nilBody},
		{"foreign struct", CmdSetRole, protocol.TaskStatus{}},
	} {
		if _, err := Encode(tc.typ, tc.body); err == nil {
			t.Errorf("%s: got no error", tc.name)
		}
	}
	if _, _, err := Decode([]byte{0x42 | byte(IgnoreUnknownFlag), 0x80}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode(flagged unknown): got %v, want ErrCorrupt", err)
	}
}

func TestCmdType_String(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ  CmdType
		want string
	}{
		{CmdLaunchTasks, "LaunchTasks"},
		{CmdMarkAgentTasks | IgnoreUnknownFlag, "MarkAgentTasks+ignorable"},
		{0x42, "CmdType(66)"},
		{0x42 | IgnoreUnknownFlag, "CmdType(66)+ignorable"},
	} {
		if got := tc.typ.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	if got := len(CmdTypes()); got != 17 {
		t.Errorf("got %d command types, want 17", got)
	}
}

// TestState_Apply_domainErrorsCarryCodes checks that domain errors keep
// their wire codes through protocol.CodeOf.
func TestState_Apply_domainErrorsCarryCodes(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	_, err := h.apply(CmdRemoveFramework, &RemoveFramework{FrameworkID: "fw-x"})
	if got := protocol.CodeOf(err); got != protocol.CodeUnknownFramework {
		t.Errorf("got code %d, want %d", got, protocol.CodeUnknownFramework)
	}
	res, err := h.apply(CmdAcknowledgeStatus, ackOne("fw-1", "t", "u"))
	if err != nil {
		t.Fatal(err)
	}
	if got := protocol.CodeOf(res.(AckResult)[0].Err); got != protocol.CodeUnknownTask {
		t.Errorf("got code %d, want %d", got, protocol.CodeUnknownTask)
	}
	if got := protocol.CodeOf(ErrAgentGone); got != protocol.CodeUnknownAgent {
		t.Errorf("got code %d for ErrAgentGone, want %d", got, protocol.CodeUnknownAgent)
	}
}
