package protocol

import (
	"errors"
	"strings"
	"testing"
)

func TestNewID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := NewID(PrefixFramework)
		if !strings.HasPrefix(id, "fw-") || len(id) != 3+26 {
			t.Fatalf("got %q, want fw- and 26 characters", id)
		}
		if !ValidID(id) || checkToken("id", id) != nil {
			t.Fatalf("got %q, want a valid ID and subject token", id)
		}
		if seen[id] {
			t.Fatalf("duplicate %q", id)
		}
		seen[id] = true
	}
	if got := NewID(""); len(got) != 26 {
		t.Errorf("no prefix: got %q, want 26 characters", got)
	}
	for _, id := range []string{string(NewFrameworkID()), string(NewAgentID()), string(NewOfferID()), string(NewStatusUUID())} {
		if !ValidID(id) {
			t.Errorf("got invalid %q", id)
		}
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"fw-1", true},
		{"task.map_3:attempt-2", true},
		{"ABC123", true},
		{strings.Repeat("a", MaxIDLen), true},
		{strings.Repeat("a", MaxIDLen+1), false},
		{"", false},
		{"a b", false},
		{"a/b", false},
		{"a*", false},
		{"a>", false},
		{"é", false},
		{"a\x00", false},
	}
	for _, tc := range tests {
		if got := ValidID(tc.in); got != tc.want {
			t.Errorf("ValidID(%q): got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestValidRole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"eng", true},
		{"eng/prod", true},
		{"a-b_c.d/e", true},
		{"", false},
		{"/eng", false},
		{"eng/", false},
		{"eng//prod", false},
		{"eng/../x", false},
		{".", false},
		{"eng prod", false},
		{strings.Repeat("a", MaxNameLen+1), false},
	}
	for _, tc := range tests {
		if got := ValidRole(tc.in); got != tc.want {
			t.Errorf("ValidRole(%q): got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSubjects_builders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Subjects
		got  func(Subjects) string
		want string
	}{
		{"default framework", Subjects{}, func(s Subjects) string { return s.APIFramework(VerbAccept) }, "allot.api.framework.accept"},
		{"default agent", Subjects{}, func(s Subjects) string { return s.APIAgent(VerbCoflowReport) }, "allot.api.agent.coflow_report"},
		{"default all", Subjects{}, Subjects.APIAll, "allot.api.>"},
		{"default leader", Subjects{}, Subjects.Leader, "allot.leader"},
		{"prefix framework", Subjects{Prefix: "allot.prod"}, func(s Subjects) string { return s.APIFramework(VerbCoflowRegister) }, "allot.prod.api.framework.coflow_register"},
		{"prefix all", Subjects{Prefix: "c1"}, Subjects.APIAll, "c1.api.>"},
		{"prefix leader", Subjects{Prefix: "c1"}, Subjects.Leader, "c1.leader"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.got(tc.s); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSubjects_FrameworkEventsAgentCmd(t *testing.T) {
	t.Parallel()
	s := Subjects{Prefix: "x"}
	if got, err := s.FrameworkEvents("fw-1"); err != nil || got != "x.fw.fw-1.events" {
		t.Errorf("FrameworkEvents: got %q, %v; want %q", got, err, "x.fw.fw-1.events")
	}
	if got, err := s.AgentCmd("ag-1"); err != nil || got != "x.agent.ag-1.cmd" {
		t.Errorf("AgentCmd: got %q, %v; want %q", got, err, "x.agent.ag-1.cmd")
	}
	for _, bad := range []string{"", "a.b", "a*", ">", "a b", "a\tb", "a\nb"} {
		if _, err := s.FrameworkEvents(FrameworkID(bad)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("FrameworkEvents(%q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
		if _, err := s.AgentCmd(AgentID(bad)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("AgentCmd(%q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
	}
}

func TestSubjects_Validate(t *testing.T) {
	t.Parallel()
	for _, good := range []string{"", "allot", "allot.prod", "a-b_c"} {
		if err := (Subjects{Prefix: good}).Validate(); err != nil {
			t.Errorf("Validate(%q): got %v, want nil", good, err)
		}
	}
	for _, bad := range []string{".allot", "allot.", "a..b", "a.*", "a.>", "a b"} {
		if err := (Subjects{Prefix: bad}).Validate(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Validate(%q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
	}
}

func TestSubjects_ParseAPI(t *testing.T) {
	t.Parallel()
	s := Subjects{Prefix: "allot.prod"}
	for _, v := range FrameworkVerbs() {
		kind, verb, ok := s.ParseAPI(s.APIFramework(v))
		if !ok || kind != "framework" || verb != string(v) {
			t.Errorf("ParseAPI(%s): got %q %q %v, want framework %q", v, kind, verb, ok, v)
		}
		if mt, ok := v.RequestType(); !ok || !mt.Known() {
			t.Errorf("%s.RequestType(): got %v %v, want a known type", v, mt, ok)
		}
	}
	for _, v := range AgentVerbs() {
		kind, verb, ok := s.ParseAPI(s.APIAgent(v))
		if !ok || kind != "agent" || verb != string(v) {
			t.Errorf("ParseAPI(%s): got %q %q %v, want agent %q", v, kind, verb, ok, v)
		}
		if mt, ok := v.RequestType(); !ok || !mt.Known() {
			t.Errorf("%s.RequestType(): got %v %v, want a known type", v, mt, ok)
		}
	}
	for _, bad := range []string{"allot.api.framework.accept", "allot.prod.api.framework.nope", "allot.prod.api.agent.accept",
		"allot.prod.api.framework", "allot.prod.api.other.accept", "allot.prod.leader", "allot.prod.api.framework.accept.x"} {
		if _, _, ok := s.ParseAPI(bad); ok {
			t.Errorf("ParseAPI(%q): got ok, want not ok", bad)
		}
	}
	if got, want := len(FrameworkVerbs()), len(frameworkVerbTypes); got != want {
		t.Errorf("FrameworkVerbs: got %d, want %d", got, want)
	}
	if got, want := len(AgentVerbs()), len(agentVerbTypes); got != want {
		t.Errorf("AgentVerbs: got %d, want %d", got, want)
	}
}
