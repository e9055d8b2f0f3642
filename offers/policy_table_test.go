package offers

import (
	"errors"
	"strings"
	"testing"
)

// TestPolicyTable: every policy has one entry, named once, with what it
// is in words; the lists and the parser read the table, the default
// first; an allocator resolves its policy's rules, and an unknown name is
// refused with the names to choose from.
func TestPolicyTable(t *testing.T) {
	seen := map[Policy]bool{}
	for _, r := range policyTable {
		if seen[r.name] || r.name == "" || r.about == "" {
			t.Errorf("policy entry %+v: named twice, unnamed or undescribed", r.name)
		}
		seen[r.name] = true
		if p, err := ParsePolicy(string(r.name)); err != nil || p != r.name {
			t.Errorf("ParsePolicy(%q) = %q, %v", r.name, p, err)
		}
		if !strings.Contains(PolicyHelp(), string(r.name)+": "+r.about) {
			t.Errorf("the help lacks %s", r.name)
		}
		a, err := New(Config{Policy: r.name})
		if err != nil || a.rules != rulesOf(r.name) || a.Policy() != r.name {
			t.Errorf("New with %s: rules %p, want %p (%v)", r.name, a.rules, rulesOf(r.name), err)
		}
	}
	if got := Policies(); len(got) != len(policyTable) || got[0] != PolicyDynamic {
		t.Errorf("Policies() = %v", got)
	}
	if !strings.HasPrefix(PolicyNames(), "dynamic, static") {
		t.Errorf("PolicyNames() = %q", PolicyNames())
	}
	if a, err := New(Config{}); err != nil || a.rules.name != PolicyDynamic {
		t.Errorf("the default policy: %v", err)
	}
	_, err := ParsePolicy("fastest")
	if !errors.Is(err, ErrUnknownPolicy) || !strings.Contains(err.Error(), PolicyNames()) {
		t.Errorf("ParsePolicy(fastest): %v", err)
	}
}
