package jobs

import (
	"math"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/allot-project/allot/protocol"
)

// Limits of a job.
const (
	MaxGroups    = 64
	MaxTasks     = 16 // per group
	MaxCount     = 10_000
	MaxNameLen   = 48
	MaxJobSource = 1 << 20 // bytes of a job file
)

// ParseFile reads and parses a job file.
func ParseFile(path string) (*Job, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse parses the job file src, named file in errors. Every problem is
// reported, each with its position, as Problems.
func Parse(file string, src []byte) (*Job, error) {
	p := &problems{file: file}
	if len(src) > MaxJobSource {
		p.at(hcl.Range{}, "the file is %d bytes, over the limit of %d", len(src), MaxJobSource)
		return nil, p.err()
	}
	f, ds := hclparse.NewParser().ParseHCL(src, file)
	p.diags(ds)
	if ds.HasErrors() {
		return nil, p.err()
	}
	var body fileBody
	p.diags(gohcl.DecodeBody(f.Body, nil, &body))
	if len(p.list) > 0 {
		return nil, p.err()
	}
	if len(body.Jobs) != 1 {
		p.at(f.Body.MissingItemRange(), "a job file holds one job block, this one %d", len(body.Jobs))
		return nil, p.err()
	}
	job := p.job(body.Jobs[0])
	if err := p.err(); err != nil {
		return nil, err
	}
	return job, nil
}

func (p *problems) job(b jobBody) *Job {
	j := &Job{Name: p.name("job", b.Name, b.NameRange), Role: b.Role, Type: Type(b.Type)}
	if b.Role != "" && !protocol.ValidRole(b.Role) {
		p.at(b.RoleRange, "role %q is not a role path (e.g. eng/batch)", b.Role)
	}
	switch j.Type {
	case "":
		j.Type = Service
	case Batch, Service:
	default:
		p.at(b.TypeRange, "type %q: want batch or service", b.Type)
	}
	jobCons := p.constraints(b.Constraints, b.ConsRange)
	j.Update = p.update(b.Update)
	if b.Periodic != nil {
		j.Periodic = p.periodic(b.Periodic)
		if j.Type != Batch {
			p.at(b.Periodic.CronRange, "periodic: only batch jobs run on a schedule")
		}
	}
	if len(b.Groups) == 0 {
		p.at(b.DefRange, "job %q has no group", b.Name)
	}
	if len(b.Groups) > MaxGroups {
		p.at(b.Groups[MaxGroups].DefRange, "more than %d groups", MaxGroups)
	}
	seen := map[string]bool{}
	for _, gb := range b.Groups {
		if seen[gb.Name] {
			p.at(gb.NameRange, "group %q is defined twice", gb.Name)
		}
		seen[gb.Name] = true
		g := p.group(gb, j.Type)
		g.Constraints = append(append([]protocol.Constraint(nil), jobCons...), g.Constraints...)
		j.Groups = append(j.Groups, g)
	}
	return j
}

func (p *problems) group(b groupBody, typ Type) Group {
	g := Group{Name: p.name("group", b.Name, b.NameRange), Count: 1, Spread: b.Spread,
		Pos: Position{File: b.DefRange.Filename, Line: b.DefRange.Start.Line, Column: b.DefRange.Start.Column}}
	if b.Count != nil {
		g.Count = *b.Count
		if g.Count < 0 || g.Count > MaxCount {
			p.at(b.CountRange, "count %d: want 0 to %d", g.Count, MaxCount)
		}
	}
	g.Constraints = p.constraints(b.Constraints, b.ConsRange)
	g.Restart = p.restart(b.Restart, typ)
	if len(b.Tasks) == 0 {
		p.at(b.DefRange, "group %q has no task", b.Name)
	}
	if len(b.Tasks) > MaxTasks {
		p.at(b.Tasks[MaxTasks].DefRange, "more than %d tasks in a group", MaxTasks)
	}
	seen := map[string]bool{}
	for _, tb := range b.Tasks {
		if seen[tb.Name] {
			p.at(tb.NameRange, "task %q is defined twice", tb.Name)
		}
		seen[tb.Name] = true
		g.Tasks = append(g.Tasks, p.task(tb))
	}
	return g
}

func (p *problems) task(b taskBody) Task {
	t := Task{Name: p.name("task", b.Name, b.NameRange), Command: b.Command, Args: b.Args, Shell: b.Shell, Env: b.Env, User: b.User}
	if strings.TrimSpace(b.Command) == "" {
		p.at(b.CommandRange, "command is empty")
	}
	for k := range b.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			p.at(b.EnvRange, "env: %q is not a variable name", k)
		}
	}
	t.KillGrace = p.duration("kill_grace", b.KillGrace, b.KillGraceRange, 0)
	t.Resources = p.resources(b.Resources)
	for _, a := range b.Artifacts {
		u := protocol.URI{Value: a.Source, Sha256: strings.ToLower(a.Sha256), OutputFile: a.Destination, Extract: a.Extract, Executable: a.Executable}
		if err := u.Validate(); err != nil {
			r := a.SourceRange
			if a.Sha256 != "" && strings.Contains(err.Error(), "sha256") {
				r = a.ShaRange
			} else if a.Destination != "" && strings.Contains(err.Error(), "output") {
				r = a.DestRange
			}
			p.at(r, "artifact: %v", err)
		}
		t.Artifacts = append(t.Artifacts, u)
	}
	if b.Check != nil {
		t.Check = p.check(b.Check, t.Resources.Ports)
	}
	return t
}

func (p *problems) resources(b *resourcesBody) Resources {
	r := Resources{CPUMilli: 100, MemMiB: 64}
	if b == nil {
		return r
	}
	if b.CPUs != nil {
		if c := *b.CPUs; !(c > 0) || c > 1e6 || math.IsInf(c, 0) {
			p.at(b.CPUsRange, "cpus %v: want more than 0", c)
		} else {
			r.CPUMilli = max(1, int64(math.Round(c*1000)))
		}
	}
	if b.Mem != "" {
		r.MemMiB = p.size("mem", b.Mem, b.MemRange)
	}
	if b.Disk != "" {
		r.DiskMiB = p.size("disk", b.Disk, b.DiskRange)
	}
	if b.Ports < 0 || b.Ports > 64 {
		p.at(b.PortsRange, "ports %d: want 0 to 64", b.Ports)
	}
	r.Ports = b.Ports
	if b.GPUs < 0 || b.GPUs > 64 {
		p.at(b.GPUsRange, "gpus %d: want 0 to 64", b.GPUs)
	}
	r.GPUs = b.GPUs
	if b.GPUShare != 0 {
		if !(b.GPUShare > 0 && b.GPUShare < 1) {
			p.at(b.GPUShareRange, "gpu_share %v: want a fraction of one device, between 0 and 1", b.GPUShare)
		} else if b.GPUs > 0 {
			p.at(b.GPUShareRange, "gpu_share: a task asks for whole gpus or a share of one, not both")
		} else {
			r.GPUMilli = int64(math.Round(b.GPUShare * protocol.DeviceMilli))
		}
	}
	return r
}

func (p *problems) check(b *checkBody, ports int) *protocol.HealthCheck {
	c := &protocol.HealthCheck{Type: protocol.HealthCheckType(b.Type), Command: b.Command, Path: b.Path, ConsecutiveFailures: b.Failures}
	switch c.Type {
	case protocol.HealthCheckCommand:
		if b.Command == "" {
			p.at(b.DefRange, "check: a command check needs a command")
		}
	case protocol.HealthCheckHTTP, protocol.HealthCheckTCP:
		if b.Port < 0 || b.Port >= ports {
			p.at(b.PortRange, "check: port %d is not one of the task's %d ports (0 is $PORT0)", b.Port, ports)
		}
		c.Port = b.Port
	default:
		p.at(b.TypeRange, "check type %q: want command, http or tcp", b.Type)
	}
	c.Interval = p.duration("interval", b.Interval, b.IntervalRange, 0)
	c.Timeout = p.duration("timeout", b.Timeout, b.TimeoutRange, 0)
	c.GracePeriod = p.duration("grace_period", b.Grace, b.GraceRange, 0)
	if c.Interval != 0 && c.Interval < protocol.MinHealthInterval {
		p.at(b.IntervalRange, "check interval %v: at least %v", c.Interval, protocol.MinHealthInterval)
	}
	return c
}

// name checks a job, group or task name: it becomes part of task IDs.
func (p *problems) name(what, s string, r hcl.Range) string {
	ok := s != "" && len(s) <= MaxNameLen
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		p.at(r, "%s name %q: want 1 to %d letters, digits, '_' or '-'", what, s, MaxNameLen)
	}
	return s
}

func (p *problems) constraints(list []string, r hcl.Range) []protocol.Constraint {
	var out []protocol.Constraint
	for _, s := range list {
		c, err := protocol.ParseConstraint(s)
		if err != nil {
			p.at(r, "%v", err)
			continue
		}
		out = append(out, c)
	}
	return out
}

// duration reads a Go duration ("15s", "1h30m"); def when s is empty.
func (p *problems) duration(what, s string, r hcl.Range, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		p.at(r, "%s %q: want a duration such as 15s, 5m or 1h30m", what, s)
		return def
	}
	return d
}

// size reads a size in MiB: 128M, 2G, or a number of MiB.
func (p *problems) size(what, s string, r hcl.Range) int64 {
	n, err := protocol.ParseMiB(s)
	if err != nil {
		p.at(r, "%s %q: %v", what, s, err)
	}
	return n
}
