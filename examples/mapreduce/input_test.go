package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lines collects the lines fn produces.
func lines(t *testing.T, fn func(func([]byte) error) error) []string {
	t.Helper()
	var out []string
	if err := fn(func(line []byte) error { out = append(out, string(line)); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func splitLines(t *testing.T, src source, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		out = append(out, lines(t, func(fn func([]byte) error) error { return src.split(i, n, fn) })...)
	}
	return out
}

func TestSource_GeneratedDeterministic(t *testing.T) {
	t.Parallel()
	for _, kind := range []jobKind{wordCount, sortJob} {
		src := source{kind: kind, seed: 7, size: 300 << 10}
		all := lines(t, src.all)
		if again := lines(t, src.all); !slices.Equal(all, again) {
			t.Fatalf("%s: two generations of one corpus differ", kind)
		}
		size := 0
		for _, l := range all {
			size += len(l) + 1
		}
		if size < int(src.size) || size > int(src.size)+5*200 {
			t.Errorf("%s: generated %d bytes, want about %d", kind, size, src.size)
		}
		// The corpus does not depend on how it is split.
		for _, n := range []int{1, 2, 3, 5, 8} {
			if got := splitLines(t, src, n); !slices.Equal(got, all) {
				t.Errorf("%s: %d splits give %d lines, the whole corpus %d", kind, n, len(got), len(all))
			}
		}
		other := source{kind: kind, seed: 8, size: src.size}
		if slices.Equal(lines(t, other.all), all) {
			t.Errorf("%s: seeds 7 and 8 generate the same corpus", kind)
		}
	}
}

func TestSource_SortRecords(t *testing.T) {
	t.Parallel()
	src := source{kind: sortJob, seed: 1, size: 64 << 10}
	seen := map[string]bool{}
	for _, l := range lines(t, src.all) {
		if len(l) != recordLen-1 || l[keyLen] != ' ' {
			t.Fatalf("record %q: want %d bytes with a %d-byte key", l, recordLen-1, keyLen)
		}
		if seen[l] {
			t.Errorf("record %q generated twice", l)
		}
		seen[l] = true
	}
}

func TestSource_DirSplits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a.txt":       "one two\nthree\n\nfour five six\n",
		"b/c.txt":     "no newline at the end",
		"b/empty.txt": "",
		"d.txt":       strings.Repeat("a long line of words that crosses split boundaries\n", 40) + "last",
		"e.txt":       "\n\n\nx\n",
	}
	var want []string
	for _, name := range []string{"a.txt", "b/c.txt", "b/empty.txt", "d.txt", "e.txt"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		if s := files[name]; s != "" {
			want = append(want, strings.Split(strings.TrimSuffix(s, "\n"), "\n")...)
		}
	}
	src := source{kind: wordCount, paths: []string{dir}}
	if got := lines(t, src.all); !slices.Equal(got, want) {
		t.Fatalf("all lines:\n%q\nwant\n%q", got, want)
	}
	for n := 1; n <= 40; n++ {
		if got := splitLines(t, src, n); !slices.Equal(got, want) {
			t.Fatalf("%d splits:\n%q\nwant\n%q", n, got, want)
		}
	}
	size, err := inputSize([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var total int
	for _, s := range files {
		total += len(s)
	}
	if size != int64(total) {
		t.Errorf("inputSize = %d, want %d", size, total)
	}
}

func TestReadLines_LongLines(t *testing.T) {
	t.Parallel()
	// Lines longer than the reader's buffer, split in the middle.
	long := bytes.Repeat([]byte("x"), 200<<10)
	content := string(long) + "\nshort\n" + string(long) + "\n"
	path := filepath.Join(t.TempDir(), "long")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []inputFile{{path: path, size: int64(len(content))}}
	for n := 1; n <= 7; n++ {
		var got []string
		for i := range n {
			got = append(got, lines(t, func(fn func([]byte) error) error { return dirSplit(files, i, n, fn) })...)
		}
		if len(got) != 3 || got[1] != "short" || len(got[0]) != len(long) || len(got[2]) != len(long) {
			t.Errorf("%d splits: %d lines", n, len(got))
		}
	}
}

func TestSource_BadSplit(t *testing.T) {
	t.Parallel()
	src := source{kind: wordCount, size: 10}
	for _, c := range [][2]int{{-1, 2}, {2, 2}, {0, 0}} {
		if err := src.split(c[0], c[1], func([]byte) error { return nil }); err == nil {
			t.Errorf("split %d of %d: no error", c[0], c[1])
		}
	}
}
