package state

import (
	"bytes"
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
	h, err := protocol.ReadHeader(b, i)
	if err != nil {
		return nil, 0, err
	}
	out = append(out, b[i:h.End]...)
	if h.Items == 0 {
		return out, h.End, nil
	}
	if depth >= maxDepth {
		return nil, 0, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	i = h.End
	if !h.IsMap {
		for n := uint64(0); n < h.Items; n++ {
			if out, i, err = canonValue(b, i, out, depth+1); err != nil {
				return nil, 0, err
			}
		}
		return out, i, nil
	}
	type entry struct{ key, kv []byte }
	entries := make([]entry, 0, min(h.Items, uint64(len(b))))
	for n := uint64(0); n < h.Items; n++ {
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
