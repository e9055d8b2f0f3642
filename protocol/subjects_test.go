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
	must := func(s string, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"framework call", must(Subjects{}.APIFramework("analytics", "fw-1", VerbAccept)), "allot.api.framework.analytics.fw-1.accept"},
		{"new framework", must(Subjects{}.APIFramework("analytics", "", VerbSubscribe)), "allot.api.framework.analytics.new.subscribe"},
		{"anonymous framework", must(Subjects{}.APIFramework("", "fw-1", VerbKill)), "allot.api.framework.anonymous.fw-1.kill"},
		{"agent call", must(Subjects{}.APIAgent("rack1", "ag-1", VerbCoflowReport)), "allot.api.agent.rack1.ag-1.coflow_report"},
		{"new agent", must(Subjects{}.APIAgent("rack1", "", VerbRegister)), "allot.api.agent.rack1.new.register"},
		{"default all", Subjects{}.APIAll(), "allot.api.>"},
		{"principal's calls", Subjects{}.APIPrincipal(KindFramework, "analytics"), "allot.api.framework.analytics.>"},
		{"default leader", Subjects{}.Leader(), "allot.leader"},
		{"events", Subjects{}.Events(), "allot.events"},
		{"framework events", must(Subjects{Prefix: "x"}.FrameworkEvents("analytics", "fw-1")), "x.fw.analytics.fw-1.events"},
		{"a principal's events", Subjects{Prefix: "x"}.FrameworkEventsAll("analytics"), "x.fw.analytics.>"},
		{"agent commands", must(Subjects{Prefix: "x"}.AgentCmd("rack1", "ag-1")), "x.agent.rack1.ag-1.cmd"},
		{"a credential's commands", Subjects{Prefix: "x"}.AgentCmdAll(""), "x.agent.anonymous.>"},
		{"inbox", Subjects{Prefix: "x"}.Inbox(KindAgent, "rack1"), "x.inbox.agent.rack1"},
		{"shuffle ingress", must(Subjects{Prefix: "x"}.ShuffleIngress("ag-1")), "x.shuffle.ag-1.ingress"},
		{"every shuffle ingress", Subjects{}.ShuffleIngressAll(), "allot.shuffle.*.ingress"},
		{"prefix framework", must(Subjects{Prefix: "allot.prod"}.APIFramework("a", "fw-1", VerbCoflowRegister)), "allot.prod.api.framework.a.fw-1.coflow_register"},
		{"prefix all", Subjects{Prefix: "c1"}.APIAll(), "c1.api.>"},
		{"prefix leader", Subjects{Prefix: "c1"}.Leader(), "c1.leader"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestSubjects_badTokens: a principal or ID that is not one subject token
// (or, for principals, not a principal name) builds no subject, so no
// caller can reach into another's subjects through a crafted name.
func TestSubjects_badTokens(t *testing.T) {
	t.Parallel()
	s := Subjects{Prefix: "x"}
	for _, bad := range []string{"a.b", "a*", ">", "a b", "a\tb", "a\nb", "*"} {
		if _, err := s.FrameworkEvents("p", FrameworkID(bad)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("FrameworkEvents(%q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
		if _, err := s.AgentCmd("p", AgentID(bad)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("AgentCmd(%q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
		if _, err := s.ShuffleIngress(AgentID(bad)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ShuffleIngress(%q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
		if _, err := s.APIFramework("p", FrameworkID(bad), VerbKill); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("APIFramework(id %q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
		if _, err := s.APIFramework(bad, "fw-1", VerbKill); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("APIFramework(principal %q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
		if _, err := s.APIAgent(bad, "ag-1", VerbHeartbeat); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("APIAgent(principal %q): got %v, want %v", bad, err, ErrInvalidArgument)
		}
	}
	for _, bad := range []string{"", "a.b"} {
		if _, err := s.FrameworkEvents("p", FrameworkID(bad)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("FrameworkEvents(%q): got %v, want %v", bad, err, ErrInvalidArgument)
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
		subject, err := s.APIFramework("analytics", "fw-1", v)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := s.ParseAPI(subject)
		if !ok || a != (APISubject{Kind: KindFramework, Principal: "analytics", ID: "fw-1", Verb: string(v)}) {
			t.Errorf("ParseAPI(%s): got %+v %v", subject, a, ok)
		}
		if mt, ok := v.RequestType(); !ok || !mt.Known() {
			t.Errorf("%s.RequestType(): got %v %v, want a known type", v, mt, ok)
		}
	}
	for _, v := range AgentVerbs() {
		subject, err := s.APIAgent("", "", v)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := s.ParseAPI(subject)
		if !ok || a != (APISubject{Kind: KindAgent, Principal: AnonymousPrincipal, Verb: string(v)}) {
			t.Errorf("ParseAPI(%s): got %+v %v", subject, a, ok)
		}
	}
	for _, bad := range []string{
		"allot.prod.api.framework.a.fw-1.nonsense", "allot.prod.api.framework.a.fw-1", "allot.prod.api.other.a.fw-1.kill",
		"allot.prod.api.agent.a.ag-1.accept", "allot.api.framework.a.fw-1.kill", "allot.prod.api.framework.a.fw-1.kill.more",
		"allot.prod.api.framework.a%.fw-1.kill", "allot.prod.api.framework..fw-1.kill", "allot.prod.fw.a.fw-1.events",
	} {
		if a, ok := s.ParseAPI(bad); ok {
			t.Errorf("ParseAPI(%q): got %+v, want not ok", bad, a)
		}
	}
	if got, want := len(FrameworkVerbs()), len(frameworkVerbTypes); got != want {
		t.Errorf("FrameworkVerbs: got %d, want %d", got, want)
	}
	if got, want := len(AgentVerbs()), len(agentVerbTypes); got != want {
		t.Errorf("AgentVerbs: got %d, want %d", got, want)
	}
}
