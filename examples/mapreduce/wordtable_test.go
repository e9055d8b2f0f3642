package main

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// eachWordTests are lines for comparing eachWord with the reference
// tokenizer, counts.addWords: the ASCII fast path and the unicode path.
var eachWordTests = []string{
	"",
	" \t ",
	"hello world",
	"Hello, World! It's 2024: v1.2.3-rc4 (x_y) a+b=c; e-mail@host.com",
	"UPPER lower MiXeD 42abc ABC42",
	"tabs\tbetween\twords\t\t",
	"punctuation!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~only",
	"0123456789",
	"café CAFÉ naïve",
	"Straße STRASSE ß",
	"Äpfel und Öl ÜBER",
	"Ελληνικά ΚΕΦΑΛΑΙΑ σίσυφος",
	"中文字符 日本語テキスト 한국어",
	"mixed ascii and ünïcode, ASCII-and-ÜNÏCODE",
	"digits ٣٤٥ and ²³ superscripts",
	"em—dash “quotes” «guillemets» …",
	"İstanbul KELVIN \u212a",
	"invalid \xff\xfe utf8 \xc3",
	"tab\tö\tend",
}

func TestEachWord_MatchesAddWords(t *testing.T) {
	t.Parallel()
	var scratch []byte
	for _, line := range eachWordTests {
		// One scratch across the lines, as a map task uses it.
		scratch = checkEachWord(t, []byte(line), scratch)
	}
}

// checkEachWord checks that eachWord yields the words of line that
// addWords counts, in the line's order, and leaves line alone.
func checkEachWord(t *testing.T, line, scratch []byte) []byte {
	t.Helper()
	orig := bytes.Clone(line)
	var got []string
	scratch = eachWord(line, scratch, func(w []byte) { got = append(got, string(w)) })
	if !bytes.Equal(line, orig) {
		t.Errorf("eachWord changed its line %q to %q", orig, line)
	}
	want := strings.FieldsFunc(string(bytes.ToLower(orig)), notWordRune)
	if !slices.Equal(got, want) {
		t.Errorf("line %q: eachWord %q, want %q", orig, got, want)
	}
	ref, mine := counts{}, counts{}
	ref.addWords(orig)
	for _, w := range got {
		mine[w]++
	}
	if !maps.Equal(mine, ref) {
		t.Errorf("line %q: eachWord counts %v, addWords %v", orig, mine, ref)
	}
	return scratch
}

func FuzzEachWord(f *testing.F) {
	for _, line := range eachWordTests {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkEachWord(t, line, nil)
	})
}

func TestWordTable(t *testing.T) {
	t.Parallel()
	words := strings.Fields("the cat the hat a cat sat on the mat a b c d e f g h i j k l m n o p q r s t u v w x y z the")
	want := counts{}
	for _, w := range words {
		want[w]++
	}
	tab := newWordTable()
	var prevBytes int64
	seen := map[string]bool{}
	for _, w := range words {
		tab.add([]byte(w))
		// The table's size grows with each new word, and only then.
		if grew := tab.bytes > prevBytes; grew == seen[w] {
			t.Errorf("adding %q (seen before: %v): bytes %d -> %d", w, seen[w], prevBytes, tab.bytes)
		}
		seen[w], prevBytes = true, tab.bytes
	}
	for _, n := range []int{1, 2, 3, 7} {
		got := counts{}
		for p, ids := range tab.partitioned(n) {
			var prev string
			rendered := lines(t, tab.lines(ids))
			if len(rendered) != len(ids) {
				t.Fatalf("%d partitions: partition %d: %d lines for %d entries", n, p, len(rendered), len(ids))
			}
			for i, l := range rendered {
				word, num, ok := strings.Cut(l, "\t")
				k, err := strconv.ParseInt(num, 10, 64)
				if !ok || err != nil || k <= 0 {
					t.Fatalf("line %q: want word<TAB>count", l)
				}
				if i > 0 && word <= prev {
					t.Errorf("%d partitions: partition %d: %q after %q: not sorted", n, p, word, prev)
				}
				if wp := wordPartition(word, n); wp != p {
					t.Errorf("%d partitions: %q in partition %d, belongs to %d", n, word, p, wp)
				}
				if _, dup := got[word]; dup {
					t.Errorf("%d partitions: %q in more than one place", n, word)
				}
				got[word] = k
				prev = word
			}
		}
		if d := got.diff(want); d != "" {
			t.Errorf("%d partitions: %s", n, d)
		}
	}

	tab.reset()
	if tab.bytes != 0 {
		t.Errorf("bytes after reset %d", tab.bytes)
	}
	for p, ids := range tab.partitioned(2) {
		if len(ids) != 0 {
			t.Errorf("after reset, partition %d holds %d entries", p, len(ids))
		}
	}
	tab.add([]byte("the"))
	if got := lines(t, tab.lines(tab.partitioned(1)[0])); !slices.Equal(got, []string{"the\t1"}) {
		t.Errorf("after reset and one add: %q, want [the\\t1]", got)
	}
}
