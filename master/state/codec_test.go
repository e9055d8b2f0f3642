package state

import (
	"bytes"
	"testing"
)

// TestDecodeBody_mapHeaders: a body is a map in any of msgpack's three
// map encodings, however few or many its entries; anything else is
// refused. It fails with the fixmap bounds narrowed (an empty map or one
// of 15 entries refused) or with map16 or map32 headers refused.
func TestDecodeBody_mapHeaders(t *testing.T) {
	t.Parallel()
	entry := func(k string, v byte) []byte { return append([]byte{0xa0 | byte(len(k))}, append([]byte(k), v)...) }
	fifteen := []byte{0x8f}
	for i := range 15 {
		fifteen = append(fifteen, entry(string(rune('a'+i)), byte(i))...)
	}
	for _, tc := range []struct {
		name string
		body []byte
		want int
	}{
		{"empty fixmap", []byte{0x80}, 0},
		{"fixmap of 15", fifteen, 15},
		{"map16", append([]byte{0xde, 0, 1}, entry("a", 1)...), 1},
		{"map32", append([]byte{0xdf, 0, 0, 0, 1}, entry("a", 1)...), 1},
	} {
		var m map[string]int
		if err := decodeBody(tc.body, &m); err != nil || len(m) != tc.want {
			t.Errorf("%s: %v, %d entries, want %d", tc.name, err, len(m), tc.want)
		}
	}
	for _, body := range [][]byte{{0x90}, {0x91, 0x01}, {0xdc, 0, 1, 0x01}, {0x01}, {0xc0}} {
		var m map[string]int
		if err := decodeBody(body, &m); err == nil {
			t.Errorf("% x: decoded as a map", body)
		}
	}
}

// TestCanonical_depth: canonical takes values nested up to maxDepth
// non-empty containers and refuses one more, whether the nesting runs
// through arrays, map keys or map values. It fails with the limit checked
// with > for >=, or with any of the three recursions not counting a
// level.
func TestCanonical_depth(t *testing.T) {
	t.Parallel()
	nest := func(levels int, wrap func([]byte) []byte) []byte {
		b := []byte{0x01}
		for range levels {
			b = wrap(b)
		}
		return b
	}
	inArray := func(b []byte) []byte { return append([]byte{0x91}, b...) }
	asKey := func(b []byte) []byte { return append(append([]byte{0x81}, b...), 0x01) }
	asValue := func(b []byte) []byte { return append([]byte{0x81, 0x01}, b...) }
	for name, wrap := range map[string]func([]byte) []byte{"arrays": inArray, "map keys": asKey, "map values": asValue} {
		at := nest(maxDepth, wrap)
		out, err := canonical(at)
		if err != nil || !bytes.Equal(out, at) {
			t.Errorf("%s, %d deep: %v", name, maxDepth, err)
		}
		if _, err := canonical(nest(maxDepth+1, wrap)); err == nil {
			t.Errorf("%s, %d deep: accepted", name, maxDepth+1)
		}
	}
}
