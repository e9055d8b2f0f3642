package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestCounts_AddWords(t *testing.T) {
	t.Parallel()
	c := counts{}
	c.addWords([]byte("The cat, the HAT; don't 42 times—Ünïcode ünïcode"))
	want := counts{"the": 2, "cat": 1, "hat": 1, "don": 1, "t": 1, "42": 1, "times": 1, "ünïcode": 2}
	if d := c.diff(want); d != "" {
		t.Errorf("addWords: %s (got %v)", d, c)
	}
	if c.total() != 10 {
		t.Errorf("total %d, want 10", c.total())
	}
}

func TestCounts_PartitionWriteRead(t *testing.T) {
	t.Parallel()
	c := counts{}
	src := source{kind: wordCount, seed: 3, size: 64 << 10}
	if err := src.all(func(line []byte) error { c.addWords(line); return nil }); err != nil {
		t.Fatal(err)
	}
	const n = 3
	merged := counts{}
	for r, p := range c.partition(n) {
		for w := range p {
			if wordPartition(w, n) != r {
				t.Errorf("word %q in partition %d, belongs to %d", w, r, wordPartition(w, n))
			}
		}
		var buf bytes.Buffer
		if err := p.write(&buf); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(p) > 0 && !slices.IsSorted(lines) {
			t.Errorf("partition %d not written in word order", r)
		}
		// Reading twice adds up.
		if err := merged.read(bytes.NewReader(buf.Bytes())); err != nil {
			t.Fatal(err)
		}
	}
	if d := merged.diff(c); d != "" {
		t.Errorf("partitions merged: %s", d)
	}
	if err := merged.read(strings.NewReader("a\t2\nb\t3")); err != nil || merged["a"] != c["a"]+2 || merged["b"] != c["b"]+3 {
		t.Errorf("read adds counts: %v, a=%d b=%d", err, merged["a"], merged["b"])
	}
}

func TestCounts_ReadMalformed(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"word\n", "word\tx\n", "\t3\n", "word\t-1\n", "word\t0\n"} {
		if err := (counts{}).read(strings.NewReader(in)); err == nil {
			t.Errorf("read(%q): no error", in)
		}
	}
}

func TestCounts_Diff(t *testing.T) {
	t.Parallel()
	want := counts{"a": 1, "b": 2, "c": 3}
	tests := []struct {
		name string
		got  counts
		diff string
	}{
		{name: "equal", got: counts{"a": 1, "b": 2, "c": 3}},
		{name: "wrong count", got: counts{"a": 1, "b": 5, "c": 3}, diff: `word "b": counted 5, want 2`},
		{name: "missing", got: counts{"a": 1, "c": 3}, diff: `word "b": counted 0, want 2`},
		{name: "extra", got: counts{"a": 1, "b": 2, "c": 3, "aa": 1}, diff: `word "aa": counted 1, want 0`},
	}
	for _, tc := range tests {
		if got := tc.got.diff(want); got != tc.diff {
			t.Errorf("%s: diff %q, want %q", tc.name, got, tc.diff)
		}
	}
}

func TestCounts_Top(t *testing.T) {
	t.Parallel()
	c := counts{"x": 5, "b": 7, "a": 7, "z": 1}
	if got := c.top(3); !slices.Equal(got, []string{"a", "b", "x"}) {
		t.Errorf("top(3) = %v", got)
	}
	if got := c.top(10); len(got) != 4 {
		t.Errorf("top(10) = %v", got)
	}
}
