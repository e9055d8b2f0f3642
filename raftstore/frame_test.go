package raftstore

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestFrame_RoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cmds [][]byte
	}{
		{"one", [][]byte{[]byte("a")}},
		{"empty command", [][]byte{{}}},
		{"several", [][]byte{[]byte("a"), {}, []byte("hello"), {0, 1, 2}}},
		{"long command", [][]byte{bytes.Repeat([]byte("x"), 300), []byte("y")}},
		{"no commands", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeFrame(encodeFrame(tc.cmds))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !slices.EqualFunc(got, tc.cmds, bytes.Equal) || len(got) != len(tc.cmds) {
				t.Fatalf("got %q, want %q", got, tc.cmds)
			}
		})
	}
}

func TestFrame_Format(t *testing.T) {
	t.Parallel()
	got := encodeFrame([][]byte{[]byte("ab"), []byte("c")})
	want := []byte{1, 2, 2, 'a', 'b', 1, 'c'}
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeFrame = %v, want %v", got, want)
	}
	if n := commandSize(200); n != 202 {
		t.Fatalf("commandSize(200) = %d, want 202", n)
	}
}

func TestFrame_DecodeCorrupt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty entry"},
		{"unknown version", []byte{2, 0}, "unknown frame version"},
		{"no count", []byte{1}, "bad command count"},
		{"count too large", []byte{1, 5, 0}, "cannot fit"},
		{"truncated command", []byte{1, 1, 4, 'a'}, "needs 4 bytes"},
		{"missing length", []byte{1, 2, 0, 0x80}, "bad length"},
		{"trailing bytes", []byte{1, 1, 1, 'a', 'b'}, "trailing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeFrame(tc.data)
			if !errors.Is(err, ErrCorruptEntry) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("decodeFrame(%v) error = %v, want ErrCorruptEntry with %q", tc.data, err, tc.want)
			}
		})
	}
}

func TestFrame_CommandsDoNotAlias(t *testing.T) {
	t.Parallel()
	cmds, err := decodeFrame(encodeFrame([][]byte{[]byte("a"), []byte("b")}))
	if err != nil {
		t.Fatal(err)
	}
	_ = append(cmds[0], 'X')
	if string(cmds[1]) != "b" {
		t.Fatalf("appending to one command changed the next: %q", cmds[1])
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(encodeFrame([][]byte{[]byte("a"), []byte("bc")}))
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		cmds, err := decodeFrame(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptEntry) {
				t.Fatalf("error %v does not wrap ErrCorruptEntry", err)
			}
			return
		}
		again, err := decodeFrame(encodeFrame(cmds))
		if err != nil || !slices.EqualFunc(again, cmds, bytes.Equal) {
			t.Fatalf("re-encoding %q gave %q, %v", cmds, again, err)
		}
	})
}
