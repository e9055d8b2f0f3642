package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// trackedReader reads its source one byte per Read, and notes in *last
// which source was read last. Read one byte at a time, a bufio.Reader
// holds no more than the line it returned, so the first Read after emit
// returns is the emitted line's source refilling: that is how the tests
// learn which source each merged line came from.
type trackedReader struct {
	src  int
	last *int
	r    io.Reader
}

func (t *trackedReader) Read(p []byte) (int, error) {
	*t.last = t.src
	return t.r.Read(p)
}

// sourceLine is a line and the index of the source it came from.
type sourceLine struct {
	line string
	src  int
}

func TestMergeLines(t *testing.T) {
	t.Parallel()
	// Lines longer than the 4 KB read buffer go through the cursor's
	// long-line path; the duplicates show whether ties keep source order.
	long1 := strings.Repeat("m", 10<<10)
	long2 := strings.Repeat("m", 10<<10) + "n"
	long3 := strings.Repeat("z", 12<<10)
	tests := []struct {
		name string
		srcs []string
	}{
		{name: "none", srcs: nil},
		{name: "all empty", srcs: []string{"", "", ""}},
		{name: "one source", srcs: []string{"a\nb\nb\nc\n"}},
		{name: "interleaved", srcs: []string{"a\nc\ne\n", "", "b\nd\nf\n"}},
		{name: "duplicates across sources", srcs: []string{"a\nc\nc\nx\n", "c\nx\n", "", "a\nc\ny\n"}},
		{name: "empty lines", srcs: []string{"\n\nb\n", "\na\n"}},
		{name: "long lines", srcs: []string{
			"a\n" + long1 + "\n" + long3 + "\n",
			"",
			long1 + "\n" + long2 + "\nn\n" + long3 + "\n",
			"b\n" + long1 + "\nz\n",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var want []sourceLine
			for i, s := range tc.srcs {
				for l := range strings.Lines(s) {
					want = append(want, sourceLine{strings.TrimSuffix(l, "\n"), i})
				}
			}
			// Stable: equal lines stay in source order.
			slices.SortStableFunc(want, func(a, b sourceLine) int { return strings.Compare(a.line, b.line) })

			// Whole reads: what the tasks do.
			var srcs []io.Reader
			for _, s := range tc.srcs {
				srcs = append(srcs, strings.NewReader(s))
			}
			var got []string
			err := mergeLines(srcs, 4096, func(line []byte) error {
				got = append(got, string(line))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			wantLines := make([]string, len(want))
			for i, w := range want {
				wantLines[i] = w.line
			}
			if !slices.Equal(got, wantLines) {
				t.Fatalf("merged %d lines %q, want %d lines %q", len(got), clipAll(got), len(wantLines), clipAll(wantLines))
			}

			// One byte per read, to see each line's source.
			last := -1
			srcs = srcs[:0]
			for i, s := range tc.srcs {
				srcs = append(srcs, &trackedReader{src: i, last: &last, r: iotest.OneByteReader(strings.NewReader(s))})
			}
			var gotSrc []sourceLine
			err = mergeLines(srcs, 4096, func(line []byte) error {
				if len(gotSrc) > 0 {
					// The read after the previous emit was its source's.
					gotSrc[len(gotSrc)-1].src = last
				}
				gotSrc = append(gotSrc, sourceLine{line: string(line), src: -1})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(gotSrc) > 0 {
				gotSrc[len(gotSrc)-1].src = last
			}
			if !slices.Equal(gotSrc, want) {
				t.Errorf("merged (line, source) %v, want %v", clipSources(gotSrc), clipSources(want))
			}
		})
	}
}

func clipAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = clip([]byte(l))
	}
	return out
}

func clipSources(lines []sourceLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("%s@%d", clip([]byte(l.line)), l.src)
	}
	return out
}

func TestMergeLines_Errors(t *testing.T) {
	t.Parallel()
	errEmit := errors.New("emit refused")
	errRead := errors.New("disk gone")
	t.Run("emit error stops the merge", func(t *testing.T) {
		t.Parallel()
		srcs := []io.Reader{strings.NewReader("a\nc\ne\n"), strings.NewReader("b\nd\nf\n")}
		calls := 0
		err := mergeLines(srcs, 4096, func([]byte) error {
			calls++
			if calls == 3 {
				return errEmit
			}
			return nil
		})
		if !errors.Is(err, errEmit) || calls != 3 {
			t.Errorf("got %v after %d emits, want %v after 3", err, calls, errEmit)
		}
	})
	for _, tc := range []struct {
		name string
		bad  io.Reader
		// emits is how many lines come out before the error: the bad
		// source's whole lines, which all sort before the other's "m".
		emits int
	}{
		{name: "at the first line", bad: iotest.ErrReader(errRead), emits: 0},
		{name: "mid-way", bad: io.MultiReader(strings.NewReader("a\nb\n"), iotest.ErrReader(errRead)), emits: 2},
		{name: "mid-line", bad: io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(errRead)), emits: 1},
	} {
		t.Run("read error "+tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			err := mergeLines([]io.Reader{strings.NewReader("m\n"), tc.bad}, 4096, func(line []byte) error {
				got = append(got, string(line))
				return nil
			})
			if !errors.Is(err, errRead) {
				t.Errorf("got %v, want %v", err, errRead)
			}
			if len(got) != tc.emits {
				t.Errorf("emitted %q before the error, want %d lines", got, tc.emits)
			}
		})
	}
}

func TestEachLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200<<10) // longer than eachLine's 64 KB buffer
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string // a substring of the error; "" for none
	}{
		{name: "empty", in: "", want: nil},
		{name: "lines", in: "a\nbb\n\nccc\n", want: []string{"a", "bb", "", "ccc"}},
		{name: "long lines intact", in: long + "\nshort\n" + long + "\n", want: []string{long, "short", long}},
		{name: "last line without newline", in: "a\nb", want: []string{"a"}, wantErr: "line 2"},
		{name: "long last line without newline", in: "a\n" + long, want: []string{"a"}, wantErr: "line 2"},
		{name: "only line without newline", in: "a", want: nil, wantErr: "line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			err := eachLine(strings.NewReader(tc.in), func(n int, line []byte) error {
				if n != len(got)+1 {
					t.Errorf("line %q numbered %d, want %d", clip(line), n, len(got)+1)
				}
				got = append(got, string(line))
				return nil
			})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one mentioning %q", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines %q, want %q", clipAll(got), clipAll(tc.want))
			}
		})
	}
	t.Run("fn error stops", func(t *testing.T) {
		t.Parallel()
		stop := errors.New("stop")
		calls := 0
		err := eachLine(strings.NewReader("a\nb\nc\n"), func(n int, _ []byte) error {
			calls++
			if n == 2 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || calls != 2 {
			t.Errorf("got %v after %d lines, want %v after 2", err, calls, stop)
		}
	})
	t.Run("read error", func(t *testing.T) {
		t.Parallel()
		errRead := errors.New("disk gone")
		err := eachLine(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(errRead)), func(int, []byte) error { return nil })
		if !errors.Is(err, errRead) {
			t.Errorf("got %v, want %v", err, errRead)
		}
	})
}

// wordN is a word and its count as countSummer passes them on.
type wordN struct {
	word string
	n    int64
}

func TestCountSummer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		lines   []string
		want    []wordN
		wantErr bool
	}{
		{name: "nothing", lines: nil, want: nil},
		{name: "one", lines: []string{"a\t4"}, want: []wordN{{"a", 4}}},
		{name: "sums consecutive", lines: []string{"a\t1", "a\t2", "b\t5", "c\t1", "c\t1", "c\t10"},
			want: []wordN{{"a", 3}, {"b", 5}, {"c", 12}}},
		// It sums runs: its input is a sorted merge, where a word's lines
		// are consecutive.
		{name: "only consecutive", lines: []string{"a\t1", "b\t1", "a\t1"}, want: []wordN{{"a", 1}, {"b", 1}, {"a", 1}}},
		{name: "prefix words differ", lines: []string{"ab\t1", "abc\t2", "abc\t3"}, want: []wordN{{"ab", 1}, {"abc", 5}}},
		{name: "large counts", lines: []string{"a\t4000000000", "a\t4000000000"}, want: []wordN{{"a", 8000000000}}},
		{name: "no tab", lines: []string{"word"}, wantErr: true},
		{name: "no count", lines: []string{"word\t"}, wantErr: true},
		{name: "count 0", lines: []string{"word\t0"}, wantErr: true},
		{name: "negative count", lines: []string{"word\t-3"}, wantErr: true},
		{name: "non-numeric count", lines: []string{"word\tx"}, wantErr: true},
		{name: "count with spaces", lines: []string{"word\t 3"}, wantErr: true},
		{name: "empty word", lines: []string{"\t3"}, wantErr: true},
		{name: "two tabs", lines: []string{"a\tb\t3"}, wantErr: true},
		{name: "malformed after good", lines: []string{"a\t1", "a\t0"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []wordN
			s := &countSummer{out: func(word []byte, n int64) error {
				got = append(got, wordN{string(word), n})
				return nil
			}}
			var err error
			for _, l := range tc.lines {
				if err = s.add([]byte(l)); err != nil {
					break
				}
			}
			if tc.wantErr {
				if err == nil {
					t.Errorf("lines %q: no error (passed on %v)", tc.lines, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.flush(); err != nil {
				t.Fatal(err)
			}
			// A second flush has nothing left to pass on.
			if err := s.flush(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines %q: passed on %v, want %v", tc.lines, got, tc.want)
			}
			if s.lines != int64(len(tc.lines)) {
				t.Errorf("counted %d lines, want %d", s.lines, len(tc.lines))
			}
		})
	}
	t.Run("out error", func(t *testing.T) {
		t.Parallel()
		refused := errors.New("refused")
		s := &countSummer{out: func([]byte, int64) error { return refused }}
		if err := s.add([]byte("a\t1")); err != nil {
			t.Fatal(err)
		}
		// "a" is passed on when "b" arrives.
		if err := s.add([]byte("b\t1")); !errors.Is(err, refused) {
			t.Errorf("add: %v, want %v", err, refused)
		}
		// The last word is passed on by flush.
		s = &countSummer{out: func([]byte, int64) error { return refused }}
		if err := s.add([]byte("c\t1")); err != nil {
			t.Fatal(err)
		}
		if err := s.flush(); !errors.Is(err, refused) {
			t.Errorf("flush: %v, want %v", err, refused)
		}
	})
}

func TestAppendCount(t *testing.T) {
	t.Parallel()
	if got := string(appendCount([]byte("x "), "word", 42)); got != "x word\t42" {
		t.Errorf("appendCount(string) = %q", got)
	}
	if got := string(appendCount(nil, []byte("w"), 9000000000)); got != "w\t9000000000" {
		t.Errorf("appendCount([]byte) = %q", got)
	}
}
