package jobs

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestParseFile_examples: the example job files parse into the jobs they
// describe.
func TestParseFile_examples(t *testing.T) {
	t.Parallel()
	web, err := ParseFile(filepath.Join("..", "examples", "jobs", "service.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if web.Name != "web" || web.Type != Service || web.Role != "eng/prod" || len(web.Groups) != 1 {
		t.Fatalf("got %+v", web)
	}
	want := Update{MaxParallel: 1, MinHealthyTime: 5 * time.Second, HealthyDeadline: 2 * time.Minute, AutoRevert: true}
	if web.Update != want {
		t.Errorf("update %+v, want %+v", web.Update, want)
	}
	g := web.Groups[0]
	if g.Count != 3 || !reflect.DeepEqual(g.Spread, []string{"rack"}) ||
		!reflect.DeepEqual(g.Constraints, []protocol.Constraint{{Attribute: "hostname", Op: protocol.OpUnique}}) {
		t.Errorf("group %+v", g)
	}
	wantRestart := Restart{Attempts: 3, Interval: 10 * time.Minute, Delay: 2 * time.Second, Backoff: 2, Mode: RestartDelay}
	if g.Restart != wantRestart {
		t.Errorf("restart %+v, want %+v", g.Restart, wantRestart)
	}
	task := g.Tasks[0]
	if !task.Shell || task.Resources != (Resources{CPUMilli: 250, MemMiB: 64, Ports: 1}) || task.Env["PYTHONUNBUFFERED"] != "1" {
		t.Errorf("task %+v", task)
	}
	if c := task.Check; c == nil || c.Type != protocol.HealthCheckHTTP || c.Port != 0 || c.Interval != 2*time.Second || c.Timeout != time.Second {
		t.Errorf("check %+v", task.Check)
	}

	batch, err := ParseFile(filepath.Join("..", "examples", "jobs", "batch.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	bg := batch.Groups[0]
	if batch.Type != Batch || bg.Count != 8 || bg.Restart.Mode != RestartFail || bg.Restart.Attempts != 2 ||
		!reflect.DeepEqual(bg.Constraints, []protocol.Constraint{{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r1", "r2"}}}) {
		t.Errorf("batch %+v", batch)
	}

	report, err := ParseFile(filepath.Join("..", "examples", "jobs", "periodic.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if p := report.Periodic; p == nil || !p.ProhibitOverlap || p.Cron != "*/5 * * * *" {
		t.Fatalf("periodic %+v", report.Periodic)
	}
	from := time.Date(2026, 11, 27, 10, 3, 12, 0, time.UTC)
	if got := report.Periodic.Next(from); !got.Equal(time.Date(2026, 11, 27, 10, 5, 0, 0, time.UTC)) {
		t.Errorf("next run after %v: %v", from, got)
	}
	// Defaults: a group of one, the type's restart policy, small resources.
	rg := report.Groups[0]
	if rg.Count != 1 || rg.Restart != defaultRestart[Batch] || rg.Tasks[0].Resources != (Resources{CPUMilli: 100, MemMiB: 64}) {
		t.Errorf("defaults: %+v", rg)
	}
}

// TestParse_problems: a bad job file gives every problem with its line and
// column, and no job.
func TestParse_problems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string // "line:col: text", each a substring of one problem
	}{
		{"syntax error", "job \"a\" {\n  group \"g\" {\n    count = \n  }\n}\n", []string{"3:13: Invalid expression"}},
		{"unknown field", "job \"a\" {\n  colour = \"red\"\n  group \"g\" {\n    task \"t\" {\n      command = \"x\"\n    }\n  }\n}\n",
			[]string{"2:3: Unsupported argument"}},
		{"wrong type", "job \"a\" {\n  group \"g\" {\n    count = \"many\"\n    task \"t\" { command = \"x\" }\n  }\n}\n",
			[]string{"3:14: Unsuitable value type"}},
		{"missing command", "job \"a\" {\n  group \"g\" {\n    task \"t\" {\n    }\n  }\n}\n", []string{"3:14: Missing required argument: The argument \"command\" is required"}},
		{"several", `job "a b" {
  type = "daemon"
  group "g" {
    count       = -1
    constraints = ["rack ~ r1"]
    task "t" {
      command = "x"
      resources {
        mem  = "lots"
        cpus = 0
      }
    }
  }
}
`, []string{"1:5: job name \"a b\"", "2:10: type \"daemon\"", "4:19: count -1", "5:19: invalid constraint: \"rack ~ r1\"",
			"9:16: mem \"lots\"", "10:16: cpus 0"}},
		{"schedules and policies", `job "a" {
  type = "service"
  periodic { cron = "every tuesday" }
  update {
    max_parallel     = 0
    healthy_deadline = "1s"
  }
  group "g" {
    restart {
      delay = "soon"
      mode  = "panic"
    }
    task "t" {
      command = "x"
      check {
        type = "http"
        port = 1
      }
    }
    task "t" { command = "y" }
  }
}
`, []string{"3:21: cron \"every tuesday\"", "3:21: periodic: only batch", "5:24: update max_parallel 0",
			"6:24: update healthy_deadline 1s", "10:15: restart delay \"soon\"", "11:15: restart mode \"panic\"",
			"17:16: check: port 1 is not one of the task's 0 ports", "20:10: task \"t\" is defined twice"}},
		{"two jobs", "job \"a\" {\n}\njob \"b\" {\n}\n",
			[]string{"1:1: a job file holds one job block, this one 2"}},
		{"no group", "job \"a\" {\n}\n", []string{"1:1: job \"a\" has no group"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := Parse("job.hcl", []byte(tc.src))
			var ps Problems
			if job != nil || !errors.As(err, &ps) || !errors.Is(err, ErrInvalidJob) {
				t.Fatalf("got %+v, %v; want Problems", job, err)
			}
			text := err.Error()
			for i := 1; i < len(ps); i++ {
				if ps[i].Line < ps[i-1].Line || ps[i].Line == ps[i-1].Line && ps[i].Column < ps[i-1].Column {
					t.Errorf("problems out of file order:\n%s", text)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(text, "job.hcl:"+w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			if len(ps) < len(tc.want) {
				t.Errorf("%d problems, want at least %d:\n%s", len(ps), len(tc.want), text)
			}
		})
	}
}
