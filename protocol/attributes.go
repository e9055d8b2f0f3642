package protocol

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ValueKind says how an attribute value compares.
type ValueKind uint8

// Attribute value kinds.
const (
	KindText ValueKind = iota
	KindNumber
	KindSet
)

// Value is an agent attribute value: text, number or set of text.
type Value struct {
	Kind   ValueKind `msgpack:"k" json:"kind"`
	Text   string    `msgpack:"t,omitempty" json:"text,omitempty"`
	Number float64   `msgpack:"n,omitempty" json:"number,omitempty"`
	Set    []string  `msgpack:"s,omitempty" json:"set,omitempty"`
}

// Text makes a text value.
func Text(s string) Value { return Value{Kind: KindText, Text: s} }

// Number makes a numeric value.
func Number(f float64) Value { return Value{Kind: KindNumber, Number: f} }

// Set makes a set value (sorted, without duplicates).
func Set(items ...string) Value {
	s := slices.Clone(items)
	slices.Sort(s)
	return Value{Kind: KindSet, Set: slices.Compact(s)}
}

// ParseValue reads a flag-style value: "{a,b}" is a set, something that
// parses as a number is a number, anything else is text.
func ParseValue(s string) Value {
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		inner := strings.TrimSpace(s[1 : len(s)-1])
		if inner == "" {
			return Set()
		}
		parts := strings.Split(inner, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return Set(parts...)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return Number(f)
	}
	return Text(s)
}

// String renders the value the way ParseValue reads it.
func (v Value) String() string {
	switch v.Kind {
	case KindNumber:
		return strconv.FormatFloat(v.Number, 'g', -1, 64)
	case KindSet:
		return "{" + strings.Join(v.Set, ",") + "}"
	default:
		return v.Text
	}
}

// Attributes are an agent's key/value facts (rack, zone, arch, kernel, gpu ...).
type Attributes map[string]Value

// ParseAttributes reads "k=v,k2=v2" pairs (values as in ParseValue; sets use
// ';' inside braces, e.g. "features={avx;sse4}").
func ParseAttributes(s string) (Attributes, error) {
	out := Attributes{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: attribute %q is not key=value", ErrInvalidArgument, kv)
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
			v = strings.ReplaceAll(v, ";", ",")
		}
		out[k] = ParseValue(v)
	}
	return out, nil
}
