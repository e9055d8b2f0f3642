package main

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// eachWord calls fn with the words of line, lowercased: maximal runs of
// letters and digits, as counts.addWords finds them. ASCII lines, the
// common case, are split without allocating; scratch holds the lowercased
// word, and fn must not keep it.
func eachWord(line, scratch []byte, fn func(word []byte)) []byte {
	for _, c := range line {
		if c >= utf8.RuneSelf {
			for _, w := range strings.FieldsFunc(string(bytes.ToLower(line)), notWordRune) {
				scratch = append(scratch[:0], w...)
				fn(scratch)
			}
			return scratch
		}
	}
	scratch = scratch[:0]
	for _, c := range line {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			scratch = append(scratch, c)
			continue
		case c >= 'A' && c <= 'Z':
			scratch = append(scratch, c+('a'-'A'))
			continue
		}
		if len(scratch) > 0 {
			fn(scratch)
			scratch = scratch[:0]
		}
	}
	if len(scratch) > 0 {
		fn(scratch)
	}
	return scratch
}

// wordTable counts words in memory, a map task's combiner: it counts
// each word of its split once per spill rather than writing it out once
// per occurrence.
type wordTable struct {
	index map[string]int32
	words []string
	n     []int64
	// bytes is what the table holds, roughly: the words and a map entry
	// for each.
	bytes int64
}

// wordEntryOverhead is a word's cost in the table beyond its letters:
// the map entry, the string header and the count.
const wordEntryOverhead = 64

func newWordTable() *wordTable { return &wordTable{index: map[string]int32{}} }

func (t *wordTable) add(word []byte) {
	if i, ok := t.index[string(word)]; ok {
		t.n[i]++
		return
	}
	w := string(word)
	t.index[w] = int32(len(t.words))
	t.words = append(t.words, w)
	t.n = append(t.n, 1)
	t.bytes += int64(len(w)) + wordEntryOverhead
}

// partitioned returns the table's entries of each of n partitions, in
// word order.
func (t *wordTable) partitioned(n int) [][]int32 {
	out := make([][]int32, n)
	for i, w := range t.words {
		p := wordPartition(w, n)
		out[p] = append(out[p], int32(i))
	}
	for _, ids := range out {
		slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(t.words[a], t.words[b]) })
	}
	return out
}

// lines calls emit with the "word<TAB>count" line of each entry in ids.
func (t *wordTable) lines(ids []int32) func(emit func([]byte) error) error {
	return func(emit func([]byte) error) error {
		var line []byte
		for _, i := range ids {
			line = appendCount(line[:0], t.words[i], t.n[i])
			if err := emit(line); err != nil {
				return err
			}
		}
		return nil
	}
}

func (t *wordTable) reset() {
	clear(t.index)
	t.words, t.n, t.bytes = t.words[:0], t.n[:0], 0
}
