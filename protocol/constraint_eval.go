package protocol

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// evalOp evaluates the per-task constraint c against its attribute's value
// v, which the agent has.
func evalOp(c Constraint, v Value) bool {
	switch c.Op {
	case OpExists:
		return true
	case OpNotExists:
		return false
	case OpEq:
		return compare(v, c.Value) == 0
	case OpNe:
		return compare(v, c.Value) != 0
	case OpLt:
		return comparable(v, c.Value) && compare(v, c.Value) < 0
	case OpLe:
		return comparable(v, c.Value) && compare(v, c.Value) <= 0
	case OpGt:
		return comparable(v, c.Value) && compare(v, c.Value) > 0
	case OpGe:
		return comparable(v, c.Value) && compare(v, c.Value) >= 0
	case OpIn:
		return anyIn(v, c.Values)
	case OpNotIn:
		return !anyIn(v, c.Values)
	case OpRegex:
		re, err := compileRegex(c.Value)
		if err != nil {
			return false
		}
		if v.Kind == KindSet {
			return slices.ContainsFunc(v.Set, re.MatchString)
		}
		return re.MatchString(v.String())
	}
	return false
}

// comparable reports whether an ordering between v and s is meaningful:
// numbers against numbers, versions against versions, text against text.
func comparable(v Value, s string) bool {
	switch v.Kind {
	case KindNumber:
		_, err := strconv.ParseFloat(s, 64)
		return err == nil
	case KindText:
		return true
	}
	return false
}

// compare orders an attribute value against a constraint operand: numerically
// for numbers, by dotted version components when both sides look like
// versions ("5.15" < "6.1" < "6.10"), as sets for sets, else as text.
func compare(v Value, s string) int {
	switch v.Kind {
	case KindNumber:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return strings.Compare(v.String(), s)
		}
		switch {
		case v.Number < f:
			return -1
		case v.Number > f:
			return 1
		}
		return 0
	case KindSet:
		other := ParseValue(s)
		if other.Kind != KindSet {
			other = Set(s)
		}
		if slices.Equal(v.Set, other.Set) {
			return 0
		}
		return strings.Compare(v.String(), other.String())
	}
	if v.Text == s {
		return 0
	}
	// Most attribute values (a GPU model, a rack) are no versions: tell
	// without parsing, which allocates.
	if dotted(v.Text) && dotted(s) {
		if a, ok := parseVersion(v.Text); ok {
			if b, ok := parseVersion(s); ok {
				return compareVersions(a, b)
			}
		}
	}
	return strings.Compare(v.Text, s)
}

// dotted reports whether s may be a version parseVersion reads: groups
// of digits, each perhaps signed, joined by single dots.
func dotted(s string) bool {
	digits, signed := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && digits > 0:
			digits, signed = 0, false
		case (c == '+' || c == '-') && digits == 0 && !signed:
			signed = true
		default:
			return false
		}
	}
	return digits > 0
}

// compareVersions orders dotted versions component by component, treating
// missing trailing components as 0 ("6.1" == "6.1.0").
func compareVersions(a, b []int64) int {
	for i := range max(len(a), len(b)) {
		var x, y int64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

func parseVersion(s string) ([]int64, bool) {
	if s == "" {
		return nil, false
	}
	parts := strings.Split(s, ".")
	out := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

func anyIn(v Value, values []string) bool {
	if v.Kind == KindSet {
		for _, m := range v.Set {
			if slices.Contains(values, m) {
				return true
			}
		}
		return false
	}
	for _, s := range values {
		if compare(v, s) == 0 {
			return true
		}
	}
	return false
}

// regexCache holds compiled patterns; it stops growing at maxCachedRegexps so
// that patterns sent by untrusted clients cannot exhaust memory.
var (
	regexCache     sync.Map // pattern -> *regexp.Regexp
	regexCacheSize atomic.Int64
)

const maxCachedRegexps = 4096

func compileRegex(p string) (*regexp.Regexp, error) {
	if re, ok := regexCache.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	if regexCacheSize.Add(1) <= maxCachedRegexps {
		regexCache.Store(p, re)
	}
	return re, nil
}
