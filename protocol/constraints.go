package protocol

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Op is a constraint operator.
type Op string

// Per-task operators, evaluated against one agent's attributes.
const (
	OpEq        Op = "=="
	OpNe        Op = "!="
	OpLt        Op = "<"
	OpLe        Op = "<="
	OpGt        Op = ">"
	OpGe        Op = ">="
	OpIn        Op = "in"
	OpNotIn     Op = "not_in"
	OpExists    Op = "exists"
	OpNotExists Op = "not_exists"
	OpRegex     Op = "regex"
)

// Group operators, evaluated over the agents of a task group or gang.
const (
	OpUnique Op = "unique"  // every task on a distinct value of the attribute
	OpMaxPer Op = "max_per" // at most N tasks per value of the attribute
	OpSame   Op = "same"    // every task on the same value of the attribute
)

// Constraint restricts placement by an agent attribute. Hard constraints are
// never violated; soft ones are preferences.
type Constraint struct {
	Attribute string   `msgpack:"attribute" json:"attribute"`
	Op        Op       `msgpack:"op" json:"op"`
	Value     string   `msgpack:"value,omitempty" json:"value,omitempty"`
	Values    []string `msgpack:"values,omitempty" json:"values,omitempty"`
	N         int      `msgpack:"n,omitempty" json:"n,omitempty"`
	Soft      bool     `msgpack:"soft,omitempty" json:"soft,omitempty"`
}

// IsGroup reports whether the operator constrains a set of placements
// rather than one.
func (c Constraint) IsGroup() bool {
	return c.Op == OpUnique || c.Op == OpMaxPer || c.Op == OpSame
}

// String renders the constraint, e.g. "rack in [r1 r2] (soft)".
func (c Constraint) String() string {
	var arg string
	switch c.Op {
	case OpIn, OpNotIn:
		arg = "[" + strings.Join(c.Values, " ") + "]"
	case OpMaxPer:
		arg = strconv.Itoa(c.N)
	case OpExists, OpNotExists, OpUnique, OpSame:
	default:
		arg = strconv.Quote(c.Value)
	}
	s := strings.TrimSpace(c.Attribute + " " + string(c.Op) + " " + arg)
	if c.Soft {
		s += " (soft)"
	}
	return s
}

// Validate checks the operator and its arguments.
func (c Constraint) Validate() error {
	if c.Attribute == "" {
		return fmt.Errorf("%w: constraint without attribute", ErrInvalidConstraint)
	}
	switch c.Op {
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpExists, OpNotExists, OpUnique, OpSame:
	case OpIn, OpNotIn:
		if len(c.Values) == 0 {
			return fmt.Errorf("%w: %s needs values", ErrInvalidConstraint, c.Op)
		}
	case OpRegex:
		if _, err := compileRegex(c.Value); err != nil {
			return fmt.Errorf("%w: regex %q: %v", ErrInvalidConstraint, c.Value, err)
		}
	case OpMaxPer:
		if c.N < 1 {
			return fmt.Errorf("%w: max_per needs n >= 1", ErrInvalidConstraint)
		}
	default:
		return fmt.Errorf("%w: unknown operator %q", ErrInvalidConstraint, c.Op)
	}
	return nil
}

// Matches evaluates a per-task constraint against attributes. It returns
// whether they satisfy it and, when not, why. Group operators always match
// here; use GroupAllows for them. A missing attribute satisfies only !=,
// not_in and not_exists.
func (c Constraint) Matches(attrs Attributes) (bool, string) {
	if c.Holds(attrs) {
		return true, ""
	}
	v, ok := attrs[c.Attribute]
	if !ok {
		return false, fmt.Sprintf("attribute %q missing for %s", c.Attribute, c)
	}
	return false, fmt.Sprintf("attribute %s=%s fails %s", c.Attribute, v, c)
}

// Holds is Matches without the reason, for the callers that decide many
// times over and need none.
func (c Constraint) Holds(attrs Attributes) bool {
	if c.IsGroup() {
		return true
	}
	v, ok := attrs[c.Attribute]
	if !ok {
		switch c.Op {
		case OpNe, OpNotIn, OpNotExists:
			return true
		}
		return false
	}
	return evalOp(c, v)
}

// MatchHard evaluates every hard per-task constraint; it returns the reason
// of the first one that fails.
func MatchHard(cs []Constraint, attrs Attributes) (bool, string) {
	for _, c := range cs {
		if c.Soft {
			continue
		}
		if ok, why := c.Matches(attrs); !ok {
			return false, why
		}
	}
	return true, ""
}

// HoldHard is MatchHard without the reason.
func HoldHard(cs []Constraint, attrs Attributes) bool {
	for _, c := range cs {
		if !c.Soft && !c.Holds(attrs) {
			return false
		}
	}
	return true
}

// SoftMisses counts the soft per-task constraints attrs fail.
func SoftMisses(cs []Constraint, attrs Attributes) int {
	n := 0
	for _, c := range cs {
		if c.Soft {
			if ok, _ := c.Matches(attrs); !ok {
				n++
			}
		}
	}
	return n
}

// GroupAllows reports whether adding a task on an agent with attributes cand
// to tasks already placed on agents with attributes placed keeps the group
// constraint satisfied.
func GroupAllows(c Constraint, placed []Attributes, cand Attributes) bool {
	key := func(a Attributes) (string, bool) {
		v, ok := a[c.Attribute]
		return v.String(), ok
	}
	ck, cok := key(cand)
	switch c.Op {
	case OpUnique:
		if !cok {
			return false
		}
		for _, p := range placed {
			if pk, ok := key(p); ok && pk == ck {
				return false
			}
		}
	case OpSame:
		if !cok {
			return false
		}
		for _, p := range placed {
			if pk, ok := key(p); !ok || pk != ck {
				return false
			}
		}
	case OpMaxPer:
		if !cok {
			return false
		}
		n := 1
		for _, p := range placed {
			if pk, ok := key(p); ok && pk == ck {
				n++
			}
		}
		return n <= c.N
	}
	return true
}

// CheckGroup verifies that placements (one per task) satisfy every hard
// group constraint in cs.
func CheckGroup(cs []Constraint, placements []Attributes) error {
	for _, c := range cs {
		if !c.IsGroup() || c.Soft {
			continue
		}
		for i := range placements {
			if !GroupAllows(c, placements[:i], placements[i]) {
				return fmt.Errorf("%w: task %d violates %s", ErrConstraintViolated, i, c)
			}
		}
	}
	return nil
}

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
