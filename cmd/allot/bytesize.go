package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteSize is a number of bytes given as people write sizes: 10GB, 512MB,
// 1.5G, 4096 (bytes). Units are powers of 1024, as Mesos's flags read
// them: K, M, G and T, each also with B or iB after it. It is a flag
// value, and a config file key taking the same text or a number of bytes.
type byteSize int64

// byteUnits are the units by their multiplier, largest first.
var byteUnits = []struct {
	prefix string
	mult   int64
}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}}

// parseByteSize reads a size (see byteSize).
func parseByteSize(s string) (int64, error) {
	num := strings.TrimSpace(s)
	upper := strings.ToUpper(num)
	mult := int64(1)
	for _, u := range byteUnits {
		if cut, ok := cutAnySuffix(upper, u.prefix+"IB", u.prefix+"B", u.prefix); ok {
			num, mult = num[:len(cut)], u.mult
			break
		}
	}
	if mult == 1 {
		if cut, ok := cutAnySuffix(upper, "B"); ok {
			num = num[:len(cut)]
		}
	}
	num = strings.TrimSpace(num)
	if n, err := strconv.ParseInt(num, 10, 64); err == nil && n >= 0 && n <= math.MaxInt64/mult {
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size: want bytes or a number with K, M, G or T (powers of 1024), e.g. 10GB", s)
	}
	return int64(math.Round(f * float64(mult))), nil
}

// cutAnySuffix cuts the first of suffixes s ends with.
func cutAnySuffix(s string, suffixes ...string) (string, bool) {
	for _, suf := range suffixes {
		if cut, ok := strings.CutSuffix(s, suf); ok {
			return cut, true
		}
	}
	return s, false
}

// String renders the size in the largest unit that holds it whole, so
// that Set reads it back.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range byteUnits {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.prefix + "B"
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err == nil {
		*b = byteSize(n)
	}
	return err
}

func (b *byteSize) Type() string { return "size" }

// UnmarshalJSON reads a size as text ("10GB") or a number of bytes.
func (b *byteSize) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		return b.Set(s)
	}
	var n int64
	if err := json.Unmarshal(data, &n); err != nil || n < 0 {
		return fmt.Errorf("want a size such as \"10GB\" or a number of bytes, got %s", data)
	}
	*b = byteSize(n)
	return nil
}
