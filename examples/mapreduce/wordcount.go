package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// counts maps words to how often they occur.
type counts map[string]int64

// addWords counts the words of line: maximal runs of letters and digits,
// lowercased.
func (c counts) addWords(line []byte) {
	for _, w := range strings.FieldsFunc(string(bytes.ToLower(line)), notWordRune) {
		c[w]++
	}
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// wordPartition is the reduce partition, of n, that counts word.
// The hash is 32-bit FNV-1a.
func wordPartition[W string | []byte](word W, n int) int {
	h := uint32(2166136261)
	for i := range len(word) {
		h ^= uint32(word[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}

// partition splits c into n partitions by wordPartition.
func (c counts) partition(n int) []counts {
	out := make([]counts, n)
	for i := range out {
		out[i] = counts{}
	}
	for w, k := range c {
		out[wordPartition(w, n)][w] = k
	}
	return out
}

// write writes c as "word\tcount" lines in word order.
func (c counts) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, word := range slices.Sorted(maps.Keys(c)) {
		bw.WriteString(word)
		bw.WriteByte('\t')
		bw.WriteString(strconv.FormatInt(c[word], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// read adds the "word\tcount" lines of r to c.
func (c counts) read(r io.Reader) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if line != "" {
			word, num, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
			k, perr := strconv.ParseInt(num, 10, 64)
			if !ok || perr != nil || word == "" || k <= 0 {
				return fmt.Errorf("line %d: %q: want word<TAB>count", n, line)
			}
			c[word] += k
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// total is the number of words counted.
func (c counts) total() int64 {
	var n int64
	for _, k := range c {
		n += k
	}
	return n
}

// top returns the n most frequent words, most frequent first (ties by
// word).
func (c counts) top(n int) []string {
	words := slices.SortedFunc(maps.Keys(c), func(a, b string) int {
		if d := cmp.Compare(c[b], c[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return words[:min(n, len(words))]
}

// diff describes the first difference between c and want, in word
// order, or returns "" when they are equal.
func (c counts) diff(want counts) string {
	words := slices.Sorted(maps.Keys(want))
	for w := range c {
		if _, ok := want[w]; !ok {
			words = append(words, w)
		}
	}
	slices.Sort(words)
	for _, w := range words {
		if c[w] != want[w] {
			return fmt.Sprintf("word %q: counted %d, want %d", w, c[w], want[w])
		}
	}
	return ""
}
