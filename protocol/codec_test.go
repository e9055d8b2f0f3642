package protocol

import (
	"bytes"
	"crypto/rand"
	"errors"
	mrand "math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestRegistry_complete(t *testing.T) {
	t.Parallel()
	bodies := sampleBodies()
	for _, mt := range MsgTypes() {
		if _, ok := NewBody(mt); !ok {
			t.Errorf("NewBody(%s): not registered", mt)
		}
		if _, ok := bodies[mt]; !ok {
			t.Errorf("no sample body for %s", mt)
		}
		if strings.HasPrefix(mt.String(), "msg_type(") {
			t.Errorf("%d has no name", mt)
		}
	}
	if got, want := len(registry), len(msgTypeNames); got != want {
		t.Errorf("registry has %d types, names %d", got, want)
	}
	if got, want := MsgType(999).String(), "msg_type(999)"; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
}

func TestEncode_roundTrip(t *testing.T) {
	t.Parallel()
	for mt, body := range sampleBodies() {
		t.Run(mt.String(), func(t *testing.T) {
			t.Parallel()
			data, err := Encode(mt, body)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			env, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if env.Version != Version || env.Type != mt {
				t.Fatalf("got version %d type %s, want %d %s", env.Version, env.Type, Version, mt)
			}
			got, _ := NewBody(mt)
			if err := DecodeBody(env, got); err != nil {
				t.Fatalf("DecodeBody: %v", err)
			}
			if g := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(g, body) {
				t.Errorf("got %#v,\nwant %#v", g, body)
			}
			if v, ok := got.(interface{ Validate() error }); ok {
				if err := v.Validate(); err != nil {
					t.Errorf("sample fails Validate: %v", err)
				}
			}
			// Encoding a pointer gives the same message.
			pdata, err := Encode(mt, got)
			if err != nil || len(pdata) != len(data) {
				t.Errorf("Encode(pointer): got %d bytes, %v; want %d bytes", len(pdata), err, len(data))
			}
		})
	}
}

func TestEncode_errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		typ  MsgType
		body any
		want error
	}{
		{"unknown type", 9999, HeartbeatEvent{}, ErrUnknownType},
		{"wrong body", MsgHeartbeatEvent, HeartbeatRequest{}, ErrInvalidArgument},
		{"nil body", MsgHeartbeatEvent, nil, ErrInvalidArgument},
		{"nil pointer", MsgHeartbeatEvent, (*HeartbeatEvent)(nil), ErrInvalidArgument},
		{"not a message", MsgHeartbeatEvent, 42, ErrInvalidArgument},
		{"too large", MsgRescindEvent, RescindEvent{OfferID: "o", Reason: strings.Repeat("x", MaxMessageSize)}, ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Encode(tc.typ, tc.body)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// rawEnvelope builds an envelope by hand, bypassing Encode's checks.
func rawEnvelope(t *testing.T, fields map[string]any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecode_rejects(t *testing.T) {
	t.Parallel()
	valid, err := Encode(MsgHeartbeatRequest, HeartbeatRequest{AgentID: "ag-1"})
	if err != nil {
		t.Fatal(err)
	}
	body := msgpack.RawMessage(valid[bytes.LastIndexByte(valid, 0x81):]) // {"ag": "ag-1"}
	deep := append(bytes.Repeat([]byte{0x91}, MaxDepth+1), 0xc0)
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"truncated", valid[:len(valid)-1], ErrMalformed},
		{"trailing garbage", append(append([]byte{}, valid...), 0x00), ErrMalformed},
		{"oversized", make([]byte, MaxMessageSize+1), ErrTooLarge},
		{"invalid code", []byte{0xc1}, ErrMalformed},
		{"not a map", []byte{0x93, 0x01, 0x02, 0x03}, ErrMalformed},
		{"huge array prefix", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}, ErrMalformed},
		{"huge map prefix", []byte{0xdf, 0x7f, 0xff, 0xff, 0xff}, ErrMalformed},
		{"huge string prefix", []byte{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}, ErrMalformed},
		{"too deep", deep, ErrMalformed},
		{"wrong version", rawEnvelope(t, map[string]any{"v": 2, "t": MsgHeartbeatRequest, "b": body}), ErrUnsupportedVersion},
		{"version 257 not truncated", rawEnvelope(t, map[string]any{"v": 257, "t": MsgHeartbeatRequest, "b": body}), ErrUnsupportedVersion},
		{"missing version", rawEnvelope(t, map[string]any{"t": MsgHeartbeatRequest, "b": body}), ErrUnsupportedVersion},
		{"unknown type", rawEnvelope(t, map[string]any{"v": 1, "t": 999, "b": body}), ErrUnknownType},
		{"type 65536+34 not truncated", rawEnvelope(t, map[string]any{"v": 1, "t": 65536 + 34, "b": body}), ErrUnknownType},
		{"nil body", rawEnvelope(t, map[string]any{"v": 1, "t": MsgHeartbeatRequest, "b": nil}), ErrMalformed},
		{"array body", rawEnvelope(t, map[string]any{"v": 1, "t": MsgHeartbeatRequest, "b": []int{1}}), ErrMalformed},
		{"string version", rawEnvelope(t, map[string]any{"v": "1", "t": MsgHeartbeatRequest, "b": body}), ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode(tc.data)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecode_itemBudget(t *testing.T) {
	t.Parallel()
	// An array of MaxArrayElems+1 nils inside a valid body.
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	_ = enc.EncodeMapLen(1)
	_ = enc.EncodeString("offers")
	_ = enc.EncodeArrayLen(MaxArrayElems + 1)
	buf.Write(bytes.Repeat([]byte{0x80}, MaxArrayElems+1))
	data := rawEnvelope(t, map[string]any{"v": 1, "t": MsgOffersEvent, "b": msgpack.RawMessage(buf.Bytes())})
	if _, err := Decode(data); !errors.Is(err, ErrTooLarge) {
		t.Errorf("got %v, want %v", err, ErrTooLarge)
	}
}

func TestDecodeBody_rejects(t *testing.T) {
	t.Parallel()
	good := Envelope{Version: Version, Type: MsgKillRequest, Body: msgpack.RawMessage{0x81, 0xa3, 't', 'i', 'd', 0xa1, 'x'}}
	tests := []struct {
		name string
		env  Envelope
		into any
		want error
	}{
		{"wrong go type", good, new(HeartbeatRequest), ErrInvalidArgument},
		{"non-pointer", good, KillRequest{}, ErrInvalidArgument},
		{"nil pointer", good, (*KillRequest)(nil), ErrInvalidArgument},
		{"unknown type", Envelope{Type: 999, Body: good.Body}, new(KillRequest), ErrUnknownType},
		{"empty body", Envelope{Type: MsgKillRequest}, new(KillRequest), ErrMalformed},
		{"field of wrong kind", Envelope{Type: MsgKillRequest, Body: msgpack.RawMessage{0x81, 0xa3, 't', 'i', 'd', 0x91, 0x01}}, new(KillRequest), ErrMalformed},
		{"trailing garbage", Envelope{Type: MsgKillRequest, Body: append(append(msgpack.RawMessage{}, good.Body...), 0xc0)}, new(KillRequest), ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := DecodeBody(tc.env, tc.into); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	// A good body into a dirty value resets it first.
	v := &KillRequest{FrameworkID: "stale", GracePeriod: 5}
	if err := DecodeBody(good, v); err != nil || *v != (KillRequest{TaskID: "x"}) {
		t.Errorf("got %+v, %v; want {TaskID:x}", *v, err)
	}
}

func TestDecode_randomBytes(t *testing.T) {
	t.Parallel()
	r := mrand.New(mrand.NewPCG(1, 2))
	for i := range 2000 {
		data := make([]byte, r.IntN(256))
		_, _ = rand.Read(data)
		if i%2 == 0 && len(data) > 0 {
			data[0] = 0x83 // start like an envelope
		}
		env, err := Decode(data)
		if err != nil {
			if CodeOf(err) == CodeInternal {
				t.Fatalf("Decode(%x): untyped error %v", data, err)
			}
			continue
		}
		v, _ := NewBody(env.Type)
		_ = DecodeBody(env, v)
	}
}

func TestDecode_unknownFieldsIgnored(t *testing.T) {
	t.Parallel()
	body := rawEnvelope(t, map[string]any{"ag": "ag-1", "future": []any{1, "x", map[string]any{"y": nil}}})
	data := rawEnvelope(t, map[string]any{"v": 1, "t": MsgHeartbeatRequest, "b": msgpack.RawMessage(body)})
	env, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var got HeartbeatRequest
	if err := DecodeBody(env, &got); err != nil || got.AgentID != "ag-1" {
		t.Errorf("got %+v, %v; want agent ag-1", got, err)
	}
}
