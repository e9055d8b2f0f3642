package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Sort jobs sort the lines of their input (records) bytewise. Map tasks
// range-partition records by boundaries the framework samples from the
// input, so reduce partition r holds only records below those of r+1, and
// the reducers' sorted outputs, concatenated in partition order, are the
// sorted input.

// Sampling: how many records the framework samples, and how long a
// boundary may be (a prefix of a sampled record still orders records the
// same way).
const (
	sampleSize  = 1000
	boundaryLen = 16
)

// bounds are the n-1 boundaries of n range partitions, ascending:
// partition r holds the records x with bounds[r-1] <= x < bounds[r].
type bounds [][]byte

// sampleBounds samples src's records and returns boundaries that split
// them into n partitions of about equal size. Like Hadoop's TeraSort it
// reads only part of the input: samplePieces pieces of about pieceSize
// bytes spread evenly over it. The sample is reproducible (a reservoir
// drawn with a generator seeded by seed).
func sampleBounds(src source, n int, seed uint64) (bounds, error) {
	r := rand.New(rand.NewPCG(seed, 0x5a4d))
	var sample [][]byte
	seen := 0
	take := func(line []byte) error {
		seen++
		if len(sample) < sampleSize {
			sample = append(sample, bytes.Clone(line[:min(len(line), boundaryLen)]))
		} else if j := r.IntN(seen); j < sampleSize {
			sample[j] = bytes.Clone(line[:min(len(line), boundaryLen)])
		}
		return nil
	}
	size := src.size
	if len(src.paths) > 0 {
		var err error
		if size, err = inputSize(src.paths); err != nil {
			return nil, err
		}
	}
	pieces := int(max(size/pieceSize, 1))
	for k := range min(pieces, samplePieces) {
		if err := src.split(k*pieces/min(pieces, samplePieces), pieces, take); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(sample, bytes.Compare)
	var out bounds
	for i := 1; i < n; i++ {
		if len(sample) == 0 {
			out = append(out, nil)
			continue
		}
		out = append(out, sample[i*len(sample)/n])
	}
	return out, nil
}

// The sampled part of a sort's input.
const (
	samplePieces = 32
	pieceSize    = 256 << 10
)

// partition returns the partition of record x.
func (b bounds) partition(x []byte) int {
	i, _ := slices.BinarySearchFunc(b, x, func(bound, x []byte) int {
		if bytes.Compare(bound, x) <= 0 {
			return -1
		}
		return 1
	})
	return i
}

// String encodes the boundaries for a command line: hex, comma-separated.
func (b bounds) String() string {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = hex.EncodeToString(x)
	}
	return strings.Join(parts, ",")
}

// parseBounds decodes boundaries encoded by bounds.String for n
// partitions.
func parseBounds(s string, n int) (bounds, error) {
	if n == 1 {
		if s != "" {
			return nil, fmt.Errorf("bounds %q for one partition", s)
		}
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != n-1 {
		return nil, fmt.Errorf("%d bounds for %d partitions, want %d", len(parts), n, n-1)
	}
	out := make(bounds, len(parts))
	for i, p := range parts {
		x, err := hex.DecodeString(p)
		if err != nil {
			return nil, fmt.Errorf("bound %d: %w", i, err)
		}
		if i > 0 && bytes.Compare(out[i-1], x) > 0 {
			return nil, fmt.Errorf("bounds not ascending at %d", i)
		}
		out[i] = x
	}
	return out, nil
}

// digest sums records without regard to their order: two sequences of
// records are permutations of each other (up to hash collisions) when
// their digests are equal.
type digest struct {
	Records int64
	Sum     uint64 // sum of the records' FNV-1a hashes, modulo 2^64
}

func (d *digest) add(x []byte) {
	h := uint64(14695981039346656037) // FNV-1a, 64 bits
	for _, c := range x {
		h ^= uint64(c)
		h *= 1099511628211
	}
	d.Records++
	d.Sum += h
}

// sortCheck checks records given in order: that they ascend, and their
// digest.
type sortCheck struct {
	digest
	prev     []byte
	disorder string // the first records out of order, if any
}

// add checks the next record; where names it in a disorder message.
func (c *sortCheck) add(x []byte, where string) {
	if c.Records > 0 && c.disorder == "" && bytes.Compare(c.prev, x) > 0 {
		c.disorder = fmt.Sprintf("record %d (%s) %q sorts before the record ahead of it %q",
			c.Records+1, where, clip(x), clip(c.prev))
	}
	c.prev = append(c.prev[:0], x...)
	c.digest.add(x)
}

// clip shortens a record for messages.
func clip(x []byte) string {
	if len(x) > 24 {
		return string(x[:24]) + "..."
	}
	return string(x)
}
