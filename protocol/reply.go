package protocol

import (
	"github.com/vmihailenco/msgpack/v5"
)

// Reply is the body of every reply on the request/reply API, sent in an
// Envelope of type MsgReply. Exactly one of these holds:
//
//   - Error is set: the request failed; Type and Body are empty.
//   - Type and Body are set: the request succeeded with a result body of
//     that type (e.g. MsgSubscribeReply for subscribe).
//   - all are empty: the request succeeded with no result (decline, kill ...).
//
// Use EncodeReply and DecodeReply rather than building one by hand.
type Reply struct {
	Error *Error             `msgpack:"e,omitempty" json:"error,omitempty"`
	Type  MsgType            `msgpack:"t,omitempty" json:"type,omitempty"`
	Body  msgpack.RawMessage `msgpack:"b,omitempty" json:"body,omitempty"`
}

// EncodeReply encodes the reply to a request: err's code and full message
// when err is non-nil (body is then ignored), else body, which must be a
// registered message struct or nil for "ok, no result". The error message is
// cut to MaxTextLen bytes. An error from EncodeReply itself (e.g. a result
// over MaxMessageSize) should be answered with EncodeReply(nil, thatErr).
func EncodeReply(body any, err error) ([]byte, error) {
	var r Reply
	switch {
	case err != nil:
		r.Error = ToWire(err)
		if len(r.Error.Message) > MaxTextLen {
			r.Error.Message = r.Error.Message[:MaxTextLen]
		}
	case body != nil:
		t, ok := TypeOf(body)
		if !ok || t == MsgReply {
			return nil, Errorf(ErrInvalidArgument, "encode reply: body is %T", body)
		}
		b, err := encodeBody(t, body)
		if err != nil {
			return nil, err
		}
		r.Type, r.Body = t, b
	}
	return Encode(MsgReply, r)
}

// DecodeReply decodes a reply produced by EncodeReply. When the reply
// carries an error it returns FromWire of it, so errors.Is(err, ErrX) holds
// for the sender's sentinel. Otherwise it decodes the result into into (a
// pointer as for DecodeBody), or ignores it when into is nil. It returns an
// error wrapping ErrMalformed when data is not a reply or carries a result
// of another type than into, and ErrInvalidArgument when into is not a
// registered message pointer.
func DecodeReply(data []byte, into any) error {
	env, err := Decode(data)
	if err != nil {
		return err
	}
	if env.Type != MsgReply {
		return Errorf(ErrMalformed, "decode reply: got %s", env.Type)
	}
	var r Reply
	if err := DecodeBody(env, &r); err != nil {
		return err
	}
	if r.Error != nil && r.Error.Code != CodeOK {
		return FromWire(r.Error)
	}
	if into == nil {
		return nil
	}
	want, ok := TypeOf(into)
	if !ok {
		return Errorf(ErrInvalidArgument, "decode reply: into is %T", into)
	}
	if r.Type != want {
		return Errorf(ErrMalformed, "decode reply: result is %s, want %s", r.Type, want)
	}
	return DecodeBody(Envelope{Version: Version, Type: r.Type, Body: r.Body}, into)
}
