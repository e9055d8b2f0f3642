package protocol

import (
	"encoding/binary"
)

// Structural limits checked on every payload before msgpack decodes it.
// msgpack v5.4.1 preallocates a slice from its length prefix whatever its
// alloc-limit setting says, and a one-byte element (an empty map) can stand
// for a struct of a few hundred bytes, so these bound the memory and stack
// one message can cost: decoding the worst 4 MiB payload (an array of
// MaxArrayElems empty TaskInfos) allocates about 60 MB.
const (
	// MaxDepth bounds the nesting of arrays and maps.
	MaxDepth = 32
	// MaxArrayElems bounds the array elements in one payload, summed over
	// all arrays. It is above every list limit Validate enforces except
	// where one message holds several maximal lists.
	MaxArrayElems = 1 << 17
	// MaxMapEntries bounds the map entries (including struct fields) in one
	// payload, summed over all maps.
	MaxMapEntries = 1 << 20
)

// scan checks that b is exactly one well-formed msgpack value within the
// structural limits. It reads every length prefix against the bytes left,
// so a forged length can neither read past the end nor make the decoder
// allocate more than the payload could fill. It does not recurse.
func scan(b []byte) error {
	var (
		i       int   // read offset
		need    = 1   // values still to read in the current container
		stack   []int // need of each enclosing container
		elems   int
		entries int
	)
	for need > 0 || len(stack) > 0 {
		if need == 0 {
			need, stack = stack[len(stack)-1], stack[:len(stack)-1]
			continue
		}
		need--
		h, err := ReadHeader(b, i)
		if err != nil {
			return err
		}
		i = h.End
		if h.Items == 0 {
			continue
		}
		left := uint64(len(b) - i)
		children := h.Items
		if h.IsMap {
			children = 2 * h.Items // items <= 2^32-1, no overflow
		}
		if children > left {
			return Errorf(ErrMalformed, "container at byte %d claims %d values, %d bytes left", i, children, left)
		}
		if h.IsMap {
			entries += int(h.Items)
		} else {
			elems += int(h.Items)
		}
		if elems > MaxArrayElems || entries > MaxMapEntries {
			return Errorf(ErrTooLarge, "more than %d array elements or %d map entries", MaxArrayElems, MaxMapEntries)
		}
		if len(stack) >= MaxDepth {
			return Errorf(ErrMalformed, "nested deeper than %d", MaxDepth)
		}
		stack = append(stack, need)
		need = int(children)
	}
	if i != len(b) {
		return Errorf(ErrMalformed, "%d trailing bytes", len(b)-i)
	}
	return nil
}

// Header describes the msgpack value starting at some offset: End is the
// offset after its header and, for a scalar, its payload; a container has
// Items elements (an array) or key/value pairs (a map) after End.
type Header struct {
	End   int
	Items uint64
	IsMap bool
}

// ReadHeader reads the header of the msgpack value at b[i:], checking that
// it, and a scalar's payload, fit in b. Errors wrap ErrMalformed.
func ReadHeader(b []byte, i int) (Header, error) {
	if i >= len(b) {
		return Header{}, Errorf(ErrMalformed, "truncated at byte %d", i)
	}
	c := b[i]
	i++
	var h Header
	var skip uint64
	switch {
	case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		// fixint, nil, bool
	case c >= 0x80 && c <= 0x8f:
		h.Items, h.IsMap = uint64(c&0x0f), true
	case c >= 0x90 && c <= 0x9f:
		h.Items = uint64(c & 0x0f)
	case c >= 0xa0 && c <= 0xbf:
		skip = uint64(c & 0x1f)
	default:
		n, w, ok := lenPrefix(c)
		if !ok {
			return Header{}, Errorf(ErrMalformed, "invalid code 0x%02x at byte %d", c, i-1)
		}
		if len(b)-i < w {
			return Header{}, Errorf(ErrMalformed, "truncated at byte %d", i)
		}
		if w > 0 {
			n = readUint(b[i : i+w])
			i += w
		}
		switch {
		case c == 0xdc || c == 0xdd:
			h.Items = n
		case c == 0xde || c == 0xdf:
			h.Items, h.IsMap = n, true
		case c >= 0xc7 && c <= 0xc9, c >= 0xd4 && c <= 0xd8: // ext, fixext: a type byte and data
			skip = n + 1
		default:
			skip = n
		}
	}
	if skip > uint64(len(b)-i) {
		return Header{}, Errorf(ErrMalformed, "truncated at byte %d", i)
	}
	h.End = i + int(skip)
	return h, nil
}

// lenPrefix describes the non-fix codes: for length-prefixed codes w is the
// width of the big-endian length; for fixed-size codes w is 0 and n is the
// payload size. ok is false for the never-used code 0xc1 and anything else
// the scanner does not know.
func lenPrefix(c byte) (n uint64, w int, ok bool) {
	switch c {
	case 0xc4, 0xc7, 0xd9: // bin8, ext8, str8
		return 0, 1, true
	case 0xc5, 0xc8, 0xda, 0xdc, 0xde: // bin16, ext16, str16, array16, map16
		return 0, 2, true
	case 0xc6, 0xc9, 0xdb, 0xdd, 0xdf: // bin32, ext32, str32, array32, map32
		return 0, 4, true
	case 0xcc, 0xd0, 0xd4: // uint8, int8, fixext1
		return 1, 0, true
	case 0xcd, 0xd1, 0xd5: // uint16, int16, fixext2
		return 2, 0, true
	case 0xca, 0xce, 0xd2, 0xd6: // float32, uint32, int32, fixext4
		return 4, 0, true
	case 0xcb, 0xcf, 0xd3, 0xd7: // float64, uint64, int64, fixext8
		return 8, 0, true
	case 0xd8: // fixext16
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

// isMapCode reports whether c starts a msgpack map.
func isMapCode(c byte) bool { return c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf }

// CheckStructure reports whether b is exactly one well-formed msgpack value
// within the structural limits above (MaxDepth, MaxArrayElems,
// MaxMapEntries), reading every length prefix against the bytes left. Call
// it before handing untrusted or stored bytes to msgpack, which would
// otherwise allocate whatever a forged length claims.
func CheckStructure(b []byte) error { return scan(b) }
