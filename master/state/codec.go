package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/allot-project/allot/protocol"
)

// Structural limits checked on every command body and snapshot record
// before msgpack decodes it: msgpack v5.4.1 preallocates a slice from its
// length prefix, so an unchecked forged prefix could exhaust memory. They
// are protocol's limits, which every request a command is built from
// already met.
const (
	maxDepth = protocol.MaxDepth
)

// marshal encodes v with compact integers and the entries of every map
// (struct fields included) sorted by key, so equal values always give
// equal bytes.
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
	return canonical(buf.Bytes())
}

// decodeBody decodes b, which must be exactly one msgpack map within the
// structural limits, into the struct pointer v. It never panics.
func decodeBody(b []byte, v any) (err error) {
	if err := protocol.CheckStructure(b); err != nil {
		return err
	}
	if c := b[0]; !(c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf) {
		return errors.New("body is not a map")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panic: %v", r)
		}
	}()
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(b))
	return dec.Decode(v)
}

// header describes the msgpack value starting at some offset: end is the
// offset after its header and, for scalars, its payload; a container has
// items elements (arrays) or key/value pairs (maps) after end.
type header struct {
	end   int
	items uint64
	isMap bool
}

// readHeader reads the header of the value at b[i:], checking that it and
// a scalar payload fit in b.
func readHeader(b []byte, i int) (header, error) {
	if i >= len(b) {
		return header{}, fmt.Errorf("truncated at byte %d", i)
	}
	c := b[i]
	i++
	var h header
	var skip uint64
	switch {
	case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
	case c >= 0x80 && c <= 0x8f:
		h.items, h.isMap = uint64(c&0x0f), true
	case c >= 0x90 && c <= 0x9f:
		h.items = uint64(c & 0x0f)
	case c >= 0xa0 && c <= 0xbf:
		skip = uint64(c & 0x1f)
	default:
		n, w, ok := lenPrefix(c)
		if !ok {
			return header{}, fmt.Errorf("invalid code 0x%02x at byte %d", c, i-1)
		}
		if len(b)-i < w {
			return header{}, fmt.Errorf("truncated at byte %d", i)
		}
		if w > 0 {
			n = readUint(b[i : i+w])
			i += w
		}
		switch {
		case c == 0xdc || c == 0xdd:
			h.items = n
		case c == 0xde || c == 0xdf:
			h.items, h.isMap = n, true
		case c >= 0xc7 && c <= 0xc9, c >= 0xd4 && c <= 0xd8: // ext: type byte + data
			skip = n + 1
		default:
			skip = n
		}
	}
	if skip > uint64(len(b)-i) {
		return header{}, fmt.Errorf("truncated at byte %d", i)
	}
	h.end = i + int(skip)
	return h, nil
}

// canonical returns b, one well-formed msgpack value, with the entries of
// every map sorted by their encoded keys. msgpack sorts only some map
// types itself; this makes the encoding of any value depend on the value
// alone, never on map iteration order.
func canonical(b []byte) ([]byte, error) {
	out, end, err := canonValue(b, 0, make([]byte, 0, len(b)), 0)
	if err != nil {
		return nil, err
	}
	if end != len(b) {
		return nil, fmt.Errorf("%d trailing bytes", len(b)-end)
	}
	return out, nil
}

// canonValue appends the canonical form of the value at b[i:] to out and
// returns the offset after the value.
func canonValue(b []byte, i int, out []byte, depth int) ([]byte, int, error) {
	h, err := readHeader(b, i)
	if err != nil {
		return nil, 0, err
	}
	out = append(out, b[i:h.end]...)
	if h.items == 0 {
		return out, h.end, nil
	}
	if depth >= maxDepth {
		return nil, 0, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	i = h.end
	if !h.isMap {
		for n := uint64(0); n < h.items; n++ {
			if out, i, err = canonValue(b, i, out, depth+1); err != nil {
				return nil, 0, err
			}
		}
		return out, i, nil
	}
	type entry struct{ key, kv []byte }
	entries := make([]entry, 0, min(h.items, uint64(len(b))))
	for n := uint64(0); n < h.items; n++ {
		var kv []byte
		var keyLen int
		if kv, i, err = canonValue(b, i, nil, depth+1); err != nil {
			return nil, 0, err
		}
		keyLen = len(kv)
		if kv, i, err = canonValue(b, i, kv, depth+1); err != nil {
			return nil, 0, err
		}
		entries = append(entries, entry{key: kv[:keyLen], kv: kv})
	}
	slices.SortFunc(entries, func(x, y entry) int { return bytes.Compare(x.key, y.key) })
	for _, e := range entries {
		out = append(out, e.kv...)
	}
	return out, i, nil
}

// lenPrefix describes the non-fix codes: for length-prefixed codes w is the
// width of the big-endian length; for fixed-size codes w is 0 and n is the
// payload size. ok is false for 0xc1 and unknown codes.
func lenPrefix(c byte) (n uint64, w int, ok bool) {
	switch c {
	case 0xc4, 0xc7, 0xd9:
		return 0, 1, true
	case 0xc5, 0xc8, 0xda, 0xdc, 0xde:
		return 0, 2, true
	case 0xc6, 0xc9, 0xdb, 0xdd, 0xdf:
		return 0, 4, true
	case 0xcc, 0xd0, 0xd4:
		return 1, 0, true
	case 0xcd, 0xd1, 0xd5:
		return 2, 0, true
	case 0xca, 0xce, 0xd2, 0xd6:
		return 4, 0, true
	case 0xcb, 0xcf, 0xd3, 0xd7:
		return 8, 0, true
	case 0xd8:
		return 16, 0, true
	}
	return 0, 0, false
}

func readUint(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	default:
		return uint64(binary.BigEndian.Uint32(b))
	}
}
