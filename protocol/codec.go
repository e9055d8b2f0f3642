package protocol

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// Encode wraps body in an Envelope of type t and returns its msgpack bytes.
// body must be t's struct (or a pointer to it, see NewBody). It returns an
// error wrapping ErrUnknownType for an unregistered t, ErrInvalidArgument
// for a body of the wrong type, and ErrTooLarge when the result would
// exceed MaxMessageSize.
func Encode(t MsgType, body any) ([]byte, error) {
	b, err := encodeBody(t, body)
	if err != nil {
		return nil, err
	}
	out, err := marshal(wireEnvelope{Version: uint64(Version), Type: uint64(t), Body: b})
	if err != nil {
		return nil, Errorf(ErrInvalidArgument, "encode %s: %v", t, err)
	}
	if len(out) > MaxMessageSize {
		return nil, Errorf(ErrTooLarge, "encode %s: %d bytes, limit %d", t, len(out), MaxMessageSize)
	}
	return out, nil
}

// encodeBody checks that body is t's struct and encodes it.
func encodeBody(t MsgType, body any) ([]byte, error) {
	if !t.Known() {
		return nil, Errorf(ErrUnknownType, "encode %s", t)
	}
	bt, ok := TypeOf(body)
	if rv := reflect.ValueOf(body); !ok || bt != t || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, Errorf(ErrInvalidArgument, "encode %s: body is %T", t, body)
	}
	b, err := marshal(body)
	if err != nil {
		return nil, Errorf(ErrInvalidArgument, "encode %s: %v", t, err)
	}
	if len(b) > MaxMessageSize {
		return nil, Errorf(ErrTooLarge, "encode %s: %d bytes, limit %d", t, len(b), MaxMessageSize)
	}
	return b, nil
}

// Decode reads an Envelope. It never panics. It returns an error wrapping
// ErrTooLarge for payloads over MaxMessageSize or structural limits,
// ErrMalformed for anything that is not exactly one well-formed envelope,
// ErrUnsupportedVersion for a version other than Version, and ErrUnknownType
// for an unregistered type. The body is checked only for structure; decode
// it with DecodeBody.
func Decode(data []byte) (Envelope, error) {
	if len(data) > MaxMessageSize {
		return Envelope{}, Errorf(ErrTooLarge, "decode: %d bytes, limit %d", len(data), MaxMessageSize)
	}
	if err := scan(data); err != nil {
		return Envelope{}, fmt.Errorf("decode: %w", err)
	}
	var w wireEnvelope
	if err := unmarshal(data, &w); err != nil {
		return Envelope{}, Errorf(ErrMalformed, "decode envelope: %v", err)
	}
	if w.Version != uint64(Version) {
		return Envelope{}, Errorf(ErrUnsupportedVersion, "decode: version %d, want %d", w.Version, Version)
	}
	if w.Type > 0xffff || !MsgType(w.Type).Known() {
		return Envelope{}, Errorf(ErrUnknownType, "decode: type %d", w.Type)
	}
	if len(w.Body) == 0 || !isMapCode(w.Body[0]) {
		return Envelope{}, Errorf(ErrMalformed, "decode %s: body is not a map", MsgType(w.Type))
	}
	return Envelope{Version: Version, Type: MsgType(w.Type), Body: w.Body}, nil
}

// DecodeBody decodes env.Body into v, which must be a non-nil pointer of the
// type NewBody(env.Type) returns; v is reset to its zero value first. It
// never panics. It returns an error wrapping ErrUnknownType for an
// unregistered env.Type, ErrInvalidArgument when v has the wrong type,
// ErrTooLarge when the body exceeds the size or structural limits, and
// ErrMalformed when the body does not decode into v.
func DecodeBody(env Envelope, v any) error {
	want, ok := NewBody(env.Type)
	if !ok {
		return Errorf(ErrUnknownType, "decode body: type %d", uint16(env.Type))
	}
	rv := reflect.ValueOf(v)
	if reflect.TypeOf(v) != reflect.TypeOf(want) || rv.IsNil() {
		return Errorf(ErrInvalidArgument, "decode %s: want %T, got %T", env.Type, want, v)
	}
	if len(env.Body) > MaxMessageSize {
		return Errorf(ErrTooLarge, "decode %s: body is %d bytes, limit %d", env.Type, len(env.Body), MaxMessageSize)
	}
	if err := scan(env.Body); err != nil {
		return fmt.Errorf("decode %s: %w", env.Type, err)
	}
	if !isMapCode(env.Body[0]) {
		return Errorf(ErrMalformed, "decode %s: body is not a map", env.Type)
	}
	rv.Elem().SetZero()
	if err := unmarshal(env.Body, v); err != nil {
		rv.Elem().SetZero()
		return Errorf(ErrMalformed, "decode %s: %v", env.Type, err)
	}
	return nil
}

// wireEnvelope is Envelope as decoded: wide integers so that out-of-range
// versions and types are rejected rather than truncated.
type wireEnvelope struct {
	Version uint64             `msgpack:"v"`
	Type    uint64             `msgpack:"t"`
	Body    msgpack.RawMessage `msgpack:"b"`
}

// marshal encodes v with compact integers.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unmarshal decodes data, which scan has accepted, into v. A panic inside
// the msgpack library is turned into an error as a last line of defence.
func unmarshal(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panic: %v", r)
		}
	}()
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(data))
	return dec.Decode(v)
}
