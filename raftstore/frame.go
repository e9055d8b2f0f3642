package raftstore

import (
	"encoding/binary"
	"fmt"
)

// A batch frame is the data of every Raft log entry that Apply writes:
//
//	frame   = version count command*
//	version = 0x01 (one byte)
//	count   = uvarint, the number of commands
//	command = uvarint length, then that many bytes
//
// Integers are unsigned varints (encoding/binary.AppendUvarint). A frame must decode
// exactly: an unknown version, a truncated command, a count that disagrees with the
// commands present, or trailing bytes all make it corrupt.
const frameVersion byte = 1

// frameHeaderMax bounds the bytes of the version and count.
const frameHeaderMax = 1 + binary.MaxVarintLen64

// commandSize is the encoded size of one command of n bytes inside a frame.
func commandSize(n int) int {
	return uvarintLen(uint64(n)) + n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// encodeFrame returns the batch frame holding cmds, in order.
func encodeFrame(cmds [][]byte) []byte {
	size := frameHeaderMax
	for _, c := range cmds {
		size += commandSize(len(c))
	}
	buf := make([]byte, 0, size)
	buf = append(buf, frameVersion)
	buf = binary.AppendUvarint(buf, uint64(len(cmds)))
	for _, c := range cmds {
		buf = binary.AppendUvarint(buf, uint64(len(c)))
		buf = append(buf, c...)
	}
	return buf
}

// decodeFrame splits a batch frame into its commands. The commands alias data (no copy)
// and have their capacity clipped, so appending to one never overwrites the next.
// Errors wrap ErrCorruptEntry.
func decodeFrame(data []byte) ([][]byte, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty entry", ErrCorruptEntry)
	}
	if data[0] != frameVersion {
		return nil, fmt.Errorf("%w: unknown frame version %d", ErrCorruptEntry, data[0])
	}
	rest := data[1:]
	count, n := binary.Uvarint(rest)
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad command count", ErrCorruptEntry)
	}
	rest = rest[n:]
	// Every command takes at least one byte (its length), which bounds the allocation.
	if count > uint64(len(rest)) {
		return nil, fmt.Errorf("%w: %d commands cannot fit in %d bytes", ErrCorruptEntry, count, len(rest))
	}
	cmds := make([][]byte, 0, count)
	for i := uint64(0); i < count; i++ {
		size, n := binary.Uvarint(rest)
		if n <= 0 {
			return nil, fmt.Errorf("%w: bad length of command %d", ErrCorruptEntry, i)
		}
		rest = rest[n:]
		if size > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: command %d needs %d bytes, %d left", ErrCorruptEntry, i, size, len(rest))
		}
		cmds = append(cmds, rest[:size:size])
		rest = rest[size:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorruptEntry, len(rest))
	}
	return cmds, nil
}
