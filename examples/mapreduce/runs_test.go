package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRuns_WriteMerge(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "spill")
	r, err := newRuns(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Three runs of partition 0, two of partition 1, each sorted, as
	// three spills leave them (the third found nothing for partition 1).
	spills := [][2][]string{
		{{"b", "d", "f"}, {"a", "zz"}},
		{{"a", "d", "g", strings.Repeat("q", 9<<10)}, {"m"}},
		{{"c", "d"}, nil},
	}
	var want [2][]string
	var bytesWritten int64
	for _, s := range spills {
		for p, lines := range s {
			if lines == nil {
				continue
			}
			if err := r.write(p, emitAll(toBytes(lines))); err != nil {
				t.Fatal(err)
			}
			want[p] = append(want[p], lines...)
			for _, l := range lines {
				bytesWritten += int64(len(l)) + 1
			}
		}
		r.spills++
	}
	if r.bytes != bytesWritten {
		t.Errorf("runs counted %d bytes, wrote %d", r.bytes, bytesWritten)
	}
	var onDisk int64
	for p := range r.paths {
		for _, path := range r.paths[p] {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			onDisk += fi.Size()
		}
	}
	if onDisk != bytesWritten || len(r.paths[0]) != 3 || len(r.paths[1]) != 2 {
		t.Errorf("runs on disk: %d bytes in %d+%d files, want %d in 3+2", onDisk, len(r.paths[0]), len(r.paths[1]), bytesWritten)
	}

	for p := range want {
		slices.Sort(want[p])
		// The smallest buffer mergeBuffer gives, below the long line.
		var got []string
		if err := r.merge(p, 4<<10, func(line []byte) error { got = append(got, string(line)); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[p]) {
			t.Errorf("partition %d merged %q, want %q", p, clipAll(got), clipAll(want[p]))
		}
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("after merging, the spill directory holds %v (%v), want nothing", left, err)
	}
}

func TestRuns_WriteError(t *testing.T) {
	t.Parallel()
	r, err := newRuns(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	err = r.write(0, func(emit func([]byte) error) error {
		if err := emit([]byte("a")); err != nil {
			return err
		}
		return refused
	})
	// A failed run is not merged later, and its bytes are not counted.
	if !errors.Is(err, refused) || len(r.paths[0]) != 0 || r.bytes != 0 {
		t.Errorf("write: %v, %d runs, %d bytes: want %v, no run, no bytes", err, len(r.paths[0]), r.bytes, refused)
	}
}

func toBytes(lines []string) [][]byte {
	out := make([][]byte, len(lines))
	for i, l := range lines {
		out[i] = []byte(l)
	}
	return out
}

func TestLineBuffer_Sorted(t *testing.T) {
	t.Parallel()
	b := newLineBuffer(1 << 10)
	in := []struct {
		part int
		line string
	}{
		{2, "zebra"}, {0, "mango"}, {1, "b"}, {0, "apple"}, {2, ""}, {0, "mango"},
		{1, "a"}, {0, "apple pie"}, {2, "aardvark"},
	}
	var want [3][]string
	for _, x := range in {
		b.add(x.part, []byte(x.line))
		want[x.part] = append(want[x.part], x.line)
	}
	for p := range want {
		slices.Sort(want[p])
	}
	check := func(when string, want [3][]string) {
		t.Helper()
		got := b.sorted(3)
		if len(got) != 3 {
			t.Fatalf("%s: sorted(3) gave %d partitions", when, len(got))
		}
		for p := range got {
			var lines []string
			for _, l := range got[p] {
				lines = append(lines, string(l))
			}
			if !slices.Equal(lines, want[p]) {
				t.Errorf("%s: partition %d: %q, want %q", when, p, lines, want[p])
			}
		}
	}
	check("filled", want)
	var n int
	for _, x := range in {
		n += len(x.line) + 1
	}
	if got, wantSize := b.size(), int64(n+lineOverhead*len(in)); got != wantSize {
		t.Errorf("size %d, want %d", got, wantSize)
	}

	b.reset()
	if b.size() != 0 {
		t.Errorf("size after reset %d", b.size())
	}
	check("reset", [3][]string{})
	// What was added before the reset does not come back.
	b.add(1, []byte("new"))
	check("reused", [3][]string{1: {"new"}})
}

func TestLineBuffer_Bounded(t *testing.T) {
	t.Parallel()
	t.Run("without reset", func(t *testing.T) {
		t.Parallel()
		// Past its limit the arena grows only by what it must hold.
		const limit = 1000
		b := newLineBuffer(limit)
		line := []byte(strings.Repeat("w", 29))
		for i := range 200 {
			b.add(i%3, line)
			if c, l := cap(b.data), len(b.data); c > max(limit, l) {
				t.Fatalf("after %d lines: capacity %d, length %d: want at most max(limit %d, length)", i+1, c, l, limit)
			}
		}
		if len(b.data) != 200*30 {
			t.Errorf("holds %d bytes, want %d", len(b.data), 200*30)
		}
	})
	for _, limit := range []int64{100, 4 << 10, 3 << 20} {
		t.Run(fmt.Sprintf("spilling at %d", limit), func(t *testing.T) {
			t.Parallel()
			// As mapSort uses it: add, and spill once the buffer is over
			// its limit; the arena holds at most the limit and the line
			// that took it over.
			b := newLineBuffer(limit)
			var longest, spills int
			for i := range 3 * int(limit) / 50 {
				line := bytes.Repeat([]byte{byte('a' + i%26)}, 20+i%80)
				longest = max(longest, len(line))
				b.add(i%3, line)
				if c := cap(b.data); int64(c) > limit+int64(longest)+1 {
					t.Fatalf("line %d: capacity %d, want at most limit %d + a line of %d", i, c, limit, longest+1)
				}
				if b.size() > limit {
					b.reset()
					spills++
				}
			}
			if spills < 2 {
				t.Errorf("%d spills: the test did not fill the buffer", spills)
			}
		})
	}
}
