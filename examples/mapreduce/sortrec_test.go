package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestBounds_Partition(t *testing.T) {
	t.Parallel()
	b := bounds{[]byte("g"), []byte("p"), []byte("p"), []byte("x")}
	tests := map[string]int{"": 0, "a": 0, "f~": 0, "g": 1, "goat": 1, "p": 3, "pz": 3, "x": 4, "zz": 4}
	for x, want := range tests {
		if got := b.partition([]byte(x)); got != want {
			t.Errorf("partition(%q) = %d, want %d", x, got, want)
		}
	}
	if got := (bounds{}).partition([]byte("any")); got != 0 {
		t.Errorf("no bounds: partition %d, want 0", got)
	}
}

func TestSampleBounds(t *testing.T) {
	t.Parallel()
	src := source{kind: sortJob, seed: 5, size: 512 << 10}
	const n = 4
	b, err := sampleBounds(src, n, src.seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != n-1 || !slices.IsSortedFunc(b, bytes.Compare) {
		t.Fatalf("bounds %q: want %d ascending", b, n-1)
	}
	again, _ := sampleBounds(src, n, src.seed)
	if b.String() != again.String() {
		t.Errorf("sampling twice: %s, then %s", b, again)
	}
	// Balanced within a generous margin, and monotone: every record of
	// a partition sorts below every record of the next.
	sizes := make([]int, n)
	var recs [][]byte
	_ = src.all(func(line []byte) error { recs = append(recs, bytes.Clone(line)); return nil })
	slices.SortFunc(recs, bytes.Compare)
	last := 0
	for _, r := range recs {
		p := b.partition(r)
		if p < last {
			t.Fatalf("record %q in partition %d after one in %d", r, p, last)
		}
		last = p
		sizes[p]++
	}
	for p, k := range sizes {
		if k < len(recs)/n/2 || k > len(recs)/n*2 {
			t.Errorf("partition %d holds %d of %d records", p, k, len(recs))
		}
	}
}

func TestBounds_StringParse(t *testing.T) {
	t.Parallel()
	for _, b := range []bounds{{[]byte("abc"), []byte("abd\x00,")}, {nil}, {[]byte("a"), []byte("a")}} {
		got, err := parseBounds(b.String(), len(b)+1)
		if err != nil || got.String() != b.String() {
			t.Errorf("round trip of %q: %q, %v", b, got, err)
		}
	}
	if got, err := parseBounds("", 1); err != nil || len(got) != 0 {
		t.Errorf("one partition: %q, %v", got, err)
	}
	for _, bad := range []struct {
		s string
		n int
	}{{"61", 1}, {"61,62", 2}, {"zz", 2}, {"62,61", 3}} {
		if _, err := parseBounds(bad.s, bad.n); err == nil {
			t.Errorf("parseBounds(%q, %d): no error", bad.s, bad.n)
		}
	}
}

func TestSortCheck(t *testing.T) {
	t.Parallel()
	input := []string{"d", "a", "c", "b", "a"}
	var want digest
	for _, x := range input {
		want.add([]byte(x))
	}
	check := func(out []string) sortCheck {
		var c sortCheck
		for _, x := range out {
			c.add([]byte(x), "p0")
		}
		return c
	}
	if c := check([]string{"a", "a", "b", "c", "d"}); c.disorder != "" || c.digest != want {
		t.Errorf("sorted permutation: disorder %q, digest %+v want %+v", c.disorder, c.digest, want)
	}
	if c := check([]string{"a", "b", "a", "c", "d"}); !strings.Contains(c.disorder, "record 3") {
		t.Errorf("out of order: disorder %q", c.disorder)
	}
	if c := check([]string{"a", "b", "c", "d"}); c.digest == want {
		t.Errorf("a record lost: digest still %+v", c.digest)
	}
	if c := check([]string{"a", "a", "b", "c", "e"}); c.digest == want {
		t.Errorf("a record changed: digest still %+v", c.digest)
	}
}

func TestVerifySort(t *testing.T) {
	t.Parallel()
	src := source{kind: sortJob, seed: 2, size: 32 << 10}
	var recs []string
	_ = src.all(func(line []byte) error { recs = append(recs, string(line)); return nil })
	slices.Sort(recs)
	half := len(recs) / 2
	outputs := [][]byte{[]byte(strings.Join(recs[:half], "\n") + "\n"), []byte(strings.Join(recs[half:], "\n") + "\n")}
	if _, err := verifySort(src, len(outputs), memOutputs(outputs)); err != nil {
		t.Errorf("sorted outputs: %v", err)
	}
	if _, err := verifySort(src, len([][]byte{outputs[1], outputs[0]}), memOutputs([][]byte{outputs[1], outputs[0]})); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("partitions swapped: %v", err)
	}
	if _, err := verifySort(src, len(outputs[:1]), memOutputs(outputs[:1])); err == nil || !strings.Contains(err.Error(), "not a permutation") {
		t.Errorf("a partition missing: %v", err)
	}
	unterminated := [][]byte{outputs[0], outputs[1][:len(outputs[1])-1]}
	if _, err := verifySort(src, len(unterminated), memOutputs(unterminated)); err == nil || !strings.Contains(err.Error(), "newline") {
		t.Errorf("last record without its newline: %v", err)
	}
}
