package jobs

import (
	"errors"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestCheckFits(t *testing.T) {
	t.Parallel()
	job, err := Parse("job.hcl", []byte(`job "j" {
  group "small" {
    task "t" {
      command = "x"
      resources {
        cpus = 1
        mem  = "1G"
      }
    }
  }
  group "big" {
    task "a" {
      command = "x"
      resources {
        cpus  = 3
        ports = 2
      }
    }
    task "b" {
      command = "x"
      resources { cpus = 2 }
    }
  }
  group "gpu" {
    constraints = ["pool == gpu", "hostname unique"]
    task "t" {
      command = "x"
    }
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	agent := func(cpus int64, pool string) Agent {
		return Agent{Resources: protocol.Resources{Scalars: map[string]int64{protocol.ResCPUs: cpus * 1000, protocol.ResMem: 4096},
			Ranges: map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 31099}}}},
			Attributes: protocol.Attributes{"pool": protocol.Text(pool)}}
	}
	err = CheckFits(job, []Agent{agent(4, "cpu"), agent(4, "cpu")})
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 {
		t.Fatalf("got %v, want two problems", err)
	}
	if !strings.HasPrefix(ps[0].String(), `job.hcl:11:3: group "big": an instance needs`) ||
		!strings.HasPrefix(ps[1].String(), `job.hcl:24:3: group "gpu": none of the 2 agents meets its constraints (pool == "gpu")`) {
		t.Errorf("problems:\n%v", err)
	}
	// An agent big enough, and one in the pool: nothing to say.
	if err := CheckFits(job, []Agent{agent(8, "cpu"), agent(1, "gpu")}); err != nil {
		t.Errorf("with room: %v", err)
	}
	// A group of count 0 runs nothing, so it fits.
	job.Groups[1].Count = 0
	job.Groups[2].Count = 0
	if err := CheckFits(job, []Agent{agent(1, "cpu")}); err != nil {
		t.Errorf("count 0: %v", err)
	}
}
