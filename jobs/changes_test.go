package jobs

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// changesGroup is a group of a job file written for the Changes tests: a
// name, a count and one task's command.
type changesGroup struct {
	name    string
	count   int
	command string
}

// changesSrc writes a job file of the groups, in their order, with the
// role and type given (left out when empty). Each group's restart policy
// is spelled out as the service default, so that a type change alone
// leaves the groups equal.
func changesSrc(role, typ string, groups ...changesGroup) string {
	var b strings.Builder
	b.WriteString("job \"web\" {\n")
	if role != "" {
		fmt.Fprintf(&b, "  role = %q\n", role)
	}
	if typ != "" {
		fmt.Fprintf(&b, "  type = %q\n", typ)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, `  group %q {
    count = %d
    restart {
      attempts = 2
      interval = "30m"
    }
    task "t" {
      command = %q
      args    = ["1"]
      resources {
        cpus = 0.1
        mem  = "16M"
      }
    }
  }
`, g.name, g.count, g.command)
	}
	b.WriteString("}\n")
	return b.String()
}

// mustParseJob parses a job file of the tests, failing the test if it is
// not valid.
func mustParseJob(t *testing.T, src string) *Job {
	t.Helper()
	job, err := Parse("job.hcl", []byte(src))
	if err != nil {
		t.Fatalf("parse:\n%s\n%v", src, err)
	}
	return job
}

// TestChanges: what a new version does to the running version's
// instances, group by group.
func TestChanges(t *testing.T) {
	t.Parallel()
	g := func(name string, count int, command string) changesGroup { return changesGroup{name, count, command} }
	for _, tc := range []struct {
		name    string
		running string // "": nothing runs
		next    string
		want    []GroupChange
	}{
		{"nothing running: all started", "",
			changesSrc("", "", g("a", 2, "sleep"), g("b", 3, "sleep")),
			[]GroupChange{{Group: "a", Start: 2}, {Group: "b", Start: 3}}},
		{"same file: all kept",
			changesSrc("", "", g("a", 2, "sleep")),
			changesSrc("", "", g("a", 2, "sleep")),
			[]GroupChange{{Group: "a", Keep: 2}}},
		{"count up only: kept and started",
			changesSrc("", "", g("a", 2, "sleep")),
			changesSrc("", "", g("a", 5, "sleep")),
			[]GroupChange{{Group: "a", Keep: 2, Start: 3}}},
		{"count down only: kept and stopped",
			changesSrc("", "", g("a", 5, "sleep")),
			changesSrc("", "", g("a", 2, "sleep")),
			[]GroupChange{{Group: "a", Keep: 2, Stop: 3}}},
		{"count down to zero: stopped",
			changesSrc("", "", g("a", 3, "sleep")),
			changesSrc("", "", g("a", 0, "sleep")),
			[]GroupChange{{Group: "a", Stop: 3}}},
		{"command changed, count up: replaced and started",
			changesSrc("", "", g("a", 2, "sleep")),
			changesSrc("", "", g("a", 3, "true")),
			[]GroupChange{{Group: "a", Replace: 2, Start: 1}}},
		{"command changed, count down: replaced and stopped",
			changesSrc("", "", g("a", 3, "sleep")),
			changesSrc("", "", g("a", 1, "true")),
			[]GroupChange{{Group: "a", Replace: 1, Stop: 2}}},
		{"command changed in one group only",
			changesSrc("", "", g("a", 2, "sleep"), g("b", 2, "sleep")),
			changesSrc("", "", g("a", 2, "sleep"), g("b", 2, "true")),
			[]GroupChange{{Group: "a", Keep: 2}, {Group: "b", Replace: 2}}},
		{"role changed: identical group replaced",
			changesSrc("eng/prod", "", g("a", 2, "sleep")),
			changesSrc("eng/batch", "", g("a", 2, "sleep")),
			[]GroupChange{{Group: "a", Replace: 2}}},
		{"role set where none was: identical group replaced",
			changesSrc("", "", g("a", 2, "sleep")),
			changesSrc("eng/prod", "", g("a", 3, "sleep")),
			[]GroupChange{{Group: "a", Replace: 2, Start: 1}}},
		{"type changed: identical group replaced",
			changesSrc("", "service", g("a", 2, "sleep")),
			changesSrc("", "batch", g("a", 2, "sleep")),
			[]GroupChange{{Group: "a", Replace: 2}}},
		{"group dropped: after next's groups, all stopped",
			changesSrc("", "", g("a", 1, "sleep"), g("b", 4, "sleep"), g("c", 2, "sleep")),
			changesSrc("", "", g("c", 2, "sleep"), g("a", 1, "sleep"), g("d", 3, "sleep")),
			[]GroupChange{{Group: "c", Keep: 2}, {Group: "a", Keep: 1}, {Group: "d", Start: 3}, {Group: "b", Stop: 4}}},
		{"order follows next",
			changesSrc("", "", g("a", 1, "sleep"), g("b", 2, "sleep")),
			changesSrc("", "", g("b", 2, "sleep"), g("a", 1, "sleep")),
			[]GroupChange{{Group: "b", Keep: 2}, {Group: "a", Keep: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var running *Job
			if tc.running != "" {
				running = mustParseJob(t, tc.running)
			}
			next := mustParseJob(t, tc.next)
			if got := Changes(running, next); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Changes:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestChanges_roleOrTypeAloneReplaces: the role and type cases above
// replace because of the job's role or type, not because the groups
// differ: the groups are the same but for their count.
func TestChanges_roleOrTypeAloneReplaces(t *testing.T) {
	t.Parallel()
	a := changesGroup{"a", 2, "sleep"}
	for _, pair := range [][2]string{
		{changesSrc("eng/prod", "", a), changesSrc("eng/batch", "", a)},
		{changesSrc("", "service", a), changesSrc("", "batch", a)},
	} {
		was, next := mustParseJob(t, pair[0]), mustParseJob(t, pair[1])
		if was.Role == next.Role && was.Type == next.Type {
			t.Fatalf("the jobs differ neither in role nor type: %+v, %+v", was, next)
		}
		if !SameButCount(was.Groups[0], next.Groups[0]) {
			t.Errorf("groups differ:\n%+v\n%+v", was.Groups[0], next.Groups[0])
		}
		if got := Changes(was, next); len(got) != 1 || got[0].Replace != 2 || got[0].Keep != 0 {
			t.Errorf("role %q type %q -> role %q type %q: got %+v, want 2 replaced",
				was.Role, was.Type, next.Role, next.Type, got)
		}
	}
}

// TestGroupChange_String: a change in words, in the order kept, replaced,
// started, stopped, leaving out what is none.
func TestGroupChange_String(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    GroupChange
		want string
	}{
		{GroupChange{Group: "web", Replace: 2, Start: 1}, "group web: 2 replaced, 1 started"},
		{GroupChange{Group: "g"}, "group g: nothing"},
		{GroupChange{Group: "g", Keep: 3}, "group g: 3 kept"},
		{GroupChange{Group: "g", Stop: 4}, "group g: 4 stopped"},
		{GroupChange{Group: "g", Start: 1, Stop: 2, Replace: 3, Keep: 4}, "group g: 4 kept, 3 replaced, 1 started, 2 stopped"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestSameButCount: two versions of a group are the same when they differ
// in their count alone.
func TestSameButCount(t *testing.T) {
	t.Parallel()
	group := func(src string) Group {
		t.Helper()
		return mustParseJob(t, src).Groups[0]
	}
	const base = `job "web" {
  group "g" {
    count = %d
    task "t" {
      command = "sleep"
      args    = [%q]
      env     = { A = %q }
      resources {
        cpus = 0.1
        mem  = "16M"
      }
    }
  }
}
`
	two := group(fmt.Sprintf(base, 2, "1", "x"))
	for _, tc := range []struct {
		name string
		g    Group
		want bool
	}{
		{"identical", group(fmt.Sprintf(base, 2, "1", "x")), true},
		{"count only", group(fmt.Sprintf(base, 7, "1", "x")), true},
		{"count and args", group(fmt.Sprintf(base, 7, "2", "x")), false},
		{"args", group(fmt.Sprintf(base, 2, "2", "x")), false},
		{"env", group(fmt.Sprintf(base, 2, "1", "y")), false},
		// Where the group is defined is not part of it.
		{"moved in the file", group("\n\n" + fmt.Sprintf(base, 2, "1", "x")), true},
	} {
		if got := SameButCount(two, tc.g); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if got := SameButCount(tc.g, two); got != tc.want {
			t.Errorf("%s, swapped: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
