package protocol

import (
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode and, when they decode, to
// DecodeBody and DecodeReply. Nothing may panic, every error must carry a
// wire code, and any body that decodes must encode again.
func FuzzDecode(f *testing.F) {
	for mt, body := range sampleBodies() {
		data, err := Encode(mt, body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, r := range []struct {
		body any
		err  error
	}{{SubscribeReply{FrameworkID: "fw-1"}, nil}, {nil, nil}, {nil, Errorf(ErrNotLeader, "try m2")}} {
		data, err := EncodeReply(r.body, r.err)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte{0xc1})
	f.Add([]byte{0x83, 0xa1, 'v', 0x01, 0xa1, 't', 0x03, 0xa1, 'b', 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := Decode(data)
		if err != nil {
			if CodeOf(err) == CodeInternal {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		v, ok := NewBody(env.Type)
		if !ok {
			t.Fatalf("Decode returned unregistered type %d", env.Type)
		}
		if err := DecodeBody(env, v); err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("DecodeBody: got %v, want malformed or too large", err)
			}
			return
		}
		if val, ok := v.(interface{ Validate() error }); ok {
			_ = val.Validate()
		}
		if _, err := Encode(env.Type, v); err != nil && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("re-encode %s: %v", env.Type, err)
		}
		if env.Type == MsgReply {
			var into SubscribeReply
			_ = DecodeReply(data, &into)
		}
	})
}

// FuzzRangesMinus checks set identities on random range sets:
// |a| = |a∩b| + |a\b|, a\b ⊆ a, (a\b) ∩ b = ∅, (a\b) ∪ (a∩b) = a, and that
// every result is normalized.
func FuzzRangesMinus(f *testing.F) {
	f.Add(uint64(1), uint64(10), uint64(20), uint64(30), uint64(5), uint64(25), uint64(0), uint64(0))
	f.Add(uint64(0), uint64(maxU), uint64(3), uint64(3), uint64(maxU), uint64(maxU), uint64(9), uint64(4))
	f.Add(uint64(5), uint64(5), uint64(6), uint64(6), uint64(5), uint64(6), uint64(7), uint64(7))
	f.Fuzz(func(t *testing.T, a1, a2, a3, a4, b1, b2, b3, b4 uint64) {
		a := Ranges{{a1, a2}, {a3, a4}}.Normalize()
		b := Ranges{{b1, b2}, {b3, b4}}.Normalize()
		diff := a.Minus(b)
		inter := a.Minus(diff) // a ∩ b
		for name, r := range map[string]Ranges{"a": a, "b": b, "a\\b": diff, "a∩b": inter} {
			if !isNormalized(r) {
				t.Fatalf("%s = %v is not normalized", name, r)
			}
		}
		if !a.ContainsAll(diff) || !a.ContainsAll(inter) || !b.ContainsAll(inter) {
			t.Fatalf("a=%v b=%v: a\\b=%v or a∩b=%v not a subset", a, b, diff, inter)
		}
		if len(diff.Minus(diff.Minus(b))) != 0 {
			t.Fatalf("a=%v b=%v: a\\b=%v meets b", a, b, diff)
		}
		if u := diff.Union(inter); !a.ContainsAll(u) || !u.ContainsAll(a) {
			t.Fatalf("a=%v b=%v: (a\\b)∪(a∩b)=%v, want a", a, b, u)
		}
		ca, cd, ci := a.Count(), diff.Count(), inter.Count()
		if ca < maxU && cd+ci != ca { // Count saturates only for the full range
			t.Fatalf("a=%v b=%v: |a|=%d, |a\\b|+|a∩b|=%d+%d", a, b, ca, cd, ci)
		}
		if n := cd; n > 0 && n < maxU {
			got, ok := diff.Take(n)
			if !ok || got.Count() != n || !diff.ContainsAll(got) {
				t.Fatalf("Take(%d) of %v: got %v, %v", n, diff, got, ok)
			}
			if _, ok := diff.Take(n + 1); ok {
				t.Fatalf("Take(%d) of %v with %d members: got ok", n+1, diff, n)
			}
		}
	})
}

// isNormalized reports whether r is sorted, valid, and has no overlapping or
// adjacent intervals.
func isNormalized(r Ranges) bool {
	for i, x := range r {
		if x.End < x.Begin {
			return false
		}
		if i > 0 && (r[i-1].End == maxU || x.Begin <= r[i-1].End+1) {
			return false
		}
	}
	return true
}
