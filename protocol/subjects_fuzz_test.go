package protocol

import (
	"testing"
	"time"
)

// FuzzParseAPI: the leader takes every caller from a subject it did not
// write. Parsing any string must not panic, and what it accepts must be
// exactly what the subject builders make of the parts: one spelling per
// call, so that the NATS servers' permissions, which match the built
// form, cover everything the leader accepts.
func FuzzParseAPI(f *testing.F) {
	s := Subjects{}
	for _, seed := range []string{
		"allot.api.framework.alice.fw-1.accept", "allot.api.agent.rack1.new.register",
		"allot.api.framework.anonymous.new.subscribe", "allot.api.framework.a.b.c.accept",
		"allot.api.agent.x.ag-1.nonsense", "allot.api.>", "", "allot.api.framework..fw-1.kill",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, subject string) {
		a, ok := s.ParseAPI(subject)
		if !ok {
			return
		}
		var built string
		var err error
		switch a.Kind {
		case KindFramework:
			built, err = s.APIFramework(a.Principal, FrameworkID(a.ID), FrameworkVerb(a.Verb))
		case KindAgent:
			built, err = s.APIAgent(a.Principal, AgentID(a.ID), AgentVerb(a.Verb))
		default:
			t.Fatalf("ParseAPI(%q) accepted kind %q", subject, a.Kind)
		}
		if err != nil || built != subject {
			t.Fatalf("ParseAPI(%q) = %+v, which builds %q (%v)", subject, a, built, err)
		}
		if id, ok := ParseIdentity(string(a.Kind) + "." + a.Principal); !ok || id.Name != a.Principal {
			t.Fatalf("ParseAPI(%q): principal %q is no identity name", subject, a.Principal)
		}
	})
}

// FuzzFilesToken: a files token is accepted only as the one its secret
// makes for its framework and expiry.
func FuzzFilesToken(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	f.Add(FrameworkFilesToken("s", "fw-1", now.Add(time.Hour)))
	f.Add("fwe:1700003600:fw-1:x")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		id, ok := CheckFrameworkFilesToken("s", token, now)
		if !ok {
			return
		}
		for exp := now.Unix() + 1; exp <= now.Unix()+366*24*3600; exp *= 2 {
			if FrameworkFilesToken("s", id, time.Unix(exp, 0)) == token {
				return
			}
		}
		// Not made by a doubling expiry: check the exact one the token names.
		rest := token[len(frameworkFilesTokenPrefix):]
		var exp int64
		for i := 0; i < len(rest) && rest[i] != ':'; i++ {
			exp = exp*10 + int64(rest[i]-'0')
		}
		if FrameworkFilesToken("s", id, time.Unix(exp, 0)) != token {
			t.Fatalf("accepted %q for %s, not a token the secret makes", token, id)
		}
	})
}
