package protocol

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func allSentinels() []*Error {
	out := make([]*Error, 0, len(sentinels))
	for c := Code(1); int(c) <= len(sentinels); c++ {
		out = append(out, sentinels[c])
	}
	return out
}

func TestError_sentinelsCoverCodes(t *testing.T) {
	t.Parallel()
	for c := CodeInternal; c <= CodeLimitExceeded; c++ {
		if s, ok := sentinels[c]; !ok || s.Code != c {
			t.Errorf("code %d: got sentinel %v, want one with that code", c, s)
		}
	}
}

func TestFromWire_everySentinel(t *testing.T) {
	t.Parallel()
	for _, s := range allSentinels() {
		t.Run(s.Message, func(t *testing.T) {
			t.Parallel()
			wrapped := fmt.Errorf("accept offer of-1: %w", s)
			w := ToWire(wrapped)
			if w.Code != s.Code {
				t.Fatalf("ToWire code: got %d, want %d", w.Code, s.Code)
			}
			if w.Message != wrapped.Error() {
				t.Errorf("ToWire message: got %q, want %q", w.Message, wrapped.Error())
			}
			got := FromWire(w)
			if !errors.Is(got, s) {
				t.Errorf("errors.Is(FromWire(%v), %v): got false, want true", w, s)
			}
			if got.Error() != wrapped.Error() {
				t.Errorf("message: got %q, want %q", got.Error(), wrapped.Error())
			}
			if CodeOf(got) != s.Code {
				t.Errorf("CodeOf: got %d, want %d", CodeOf(got), s.Code)
			}
			for _, other := range allSentinels() {
				if other != s && errors.Is(got, other) {
					t.Errorf("errors.Is(%v, %v): got true, want false", got, other)
				}
			}
			// Twice across the wire keeps the code.
			if again := FromWire(ToWire(got)); !errors.Is(again, s) {
				t.Errorf("second trip: got %v, want code %d", again, s.Code)
			}
		})
	}
}

func TestToWire_cases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want Code
	}{
		{"nil", nil, CodeOK},
		{"plain error is internal", errors.New("boom"), CodeInternal},
		{"Errorf", Errorf(ErrUnknownOffer, "offer %s", "of-1"), CodeUnknownOffer},
		{"double wrap", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", ErrNotLeader)), CodeNotLeader},
		{"joined picks first", errors.Join(ErrTimeout, ErrUnknownTask), CodeTimeout},
		{"validation", SubscribeRequest{Name: "x"}.Validate(), CodeInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := ToWire(tc.err)
			if tc.err == nil {
				if w != nil {
					t.Errorf("got %v, want nil", w)
				}
				return
			}
			if w.Code != tc.want {
				t.Errorf("got code %d, want %d", w.Code, tc.want)
			}
		})
	}
}

func TestFromWire_cases(t *testing.T) {
	t.Parallel()
	if err := FromWire(nil); err != nil {
		t.Errorf("nil: got %v, want nil", err)
	}
	if err := FromWire(&Error{Code: CodeOK, Message: "fine"}); err != nil {
		t.Errorf("ok: got %v, want nil", err)
	}
	// A code this version does not know still matches itself.
	future := FromWire(&Error{Code: 999, Message: "from the future"})
	if !errors.Is(future, &Error{Code: 999}) || errors.Is(future, ErrInternal) {
		t.Errorf("unknown code: got %v, want code 999 only", future)
	}
	if future.Error() != "from the future" {
		t.Errorf("got %q, want %q", future.Error(), "from the future")
	}
}

func TestErrorf_message(t *testing.T) {
	t.Parallel()
	err := Errorf(ErrUnknownFramework, "framework %s", "fw-1")
	if got, want := err.Error(), "framework fw-1: unknown framework"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, ErrUnknownFramework) {
		t.Errorf("errors.Is: got false, want true")
	}
}

func TestEncodeReply_roundTrip(t *testing.T) {
	t.Parallel()
	want := SubscribeReply{FrameworkID: "fw-1", LeaderID: "m2", HeartbeatInterval: 3}
	data, err := EncodeReply(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got SubscribeReply
	if err := DecodeReply(data, &got); err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	if err := DecodeReply(data, nil); err != nil {
		t.Errorf("nil into: got %v, want nil", err)
	}
	var wrong RegisterReply
	if err := DecodeReply(data, &wrong); !errors.Is(err, ErrMalformed) {
		t.Errorf("wrong into: got %v, want %v", err, ErrMalformed)
	}
	var notMsg int
	if err := DecodeReply(data, &notMsg); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("non-message into: got %v, want %v", err, ErrInvalidArgument)
	}
}

func TestEncodeReply_emptyBody(t *testing.T) {
	t.Parallel()
	data, err := EncodeReply(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := DecodeReply(data, nil); err != nil {
		t.Errorf("got %v, want nil", err)
	}
	var r SubscribeReply
	if err := DecodeReply(data, &r); !errors.Is(err, ErrMalformed) {
		t.Errorf("missing body: got %v, want %v", err, ErrMalformed)
	}
}

func TestDecodeReply_everySentinel(t *testing.T) {
	t.Parallel()
	for _, s := range allSentinels() {
		sent := Errorf(s, "while handling accept")
		data, err := EncodeReply(SubscribeReply{}, sent)
		if err != nil {
			t.Fatal(err)
		}
		var into SubscribeReply
		got := DecodeReply(data, &into)
		if !errors.Is(got, s) || got.Error() != sent.Error() {
			t.Errorf("got %v, want %v matching code %d", got, sent, s.Code)
		}
	}
}

func TestEncodeReply_errors(t *testing.T) {
	t.Parallel()
	if _, err := EncodeReply(42, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("non-message body: got %v, want %v", err, ErrInvalidArgument)
	}
	if _, err := EncodeReply(Reply{}, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nested reply: got %v, want %v", err, ErrInvalidArgument)
	}
	long := errors.New(strings.Repeat("x", 2*MaxTextLen))
	data, err := EncodeReply(nil, long)
	if err != nil {
		t.Fatal(err)
	}
	if got := DecodeReply(data, nil); len(got.Error()) != MaxTextLen || CodeOf(got) != CodeInternal {
		t.Errorf("got %d-byte code %d error, want %d bytes code %d", len(got.Error()), CodeOf(got), MaxTextLen, CodeInternal)
	}
	ev, err := Encode(MsgHeartbeatEvent, HeartbeatEvent{Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := DecodeReply(ev, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("not a reply: got %v, want %v", err, ErrMalformed)
	}
	if err := DecodeReply([]byte{0xc1}, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("garbage: got %v, want %v", err, ErrMalformed)
	}
}

func TestErrorEvent_Err(t *testing.T) {
	t.Parallel()
	ev := ErrorEvent{Error: *ToWire(Errorf(ErrUnknownFramework, "fw-1 removed"))}
	if err := ev.Err(); !errors.Is(err, ErrUnknownFramework) {
		t.Errorf("got %v, want %v", err, ErrUnknownFramework)
	}
}
