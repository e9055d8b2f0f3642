package jobs

import "github.com/hashicorp/hcl/v2"

// The HCL shape of a job file, as gohcl decodes it. Values that need more
// than a type conversion (durations, sizes, constraints, names) are read
// as strings and checked afterwards, with their ranges kept for errors.

type fileBody struct {
	Jobs []jobBody `hcl:"job,block"`
}

type jobBody struct {
	Name        string        `hcl:"name,label"`
	NameRange   hcl.Range     `hcl:"name,label_range"`
	Role        string        `hcl:"role,optional"`
	RoleRange   hcl.Range     `hcl:"role,attr_value_range"`
	Type        string        `hcl:"type,optional"`
	TypeRange   hcl.Range     `hcl:"type,attr_value_range"`
	Constraints []string      `hcl:"constraints,optional"`
	ConsRange   hcl.Range     `hcl:"constraints,attr_value_range"`
	Update      *updateBody   `hcl:"update,block"`
	Periodic    *periodicBody `hcl:"periodic,block"`
	Groups      []groupBody   `hcl:"group,block"`
	DefRange    hcl.Range     `hcl:",def_range"`
}

type groupBody struct {
	Name        string       `hcl:"name,label"`
	NameRange   hcl.Range    `hcl:"name,label_range"`
	Count       *int         `hcl:"count,optional"`
	CountRange  hcl.Range    `hcl:"count,attr_value_range"`
	Constraints []string     `hcl:"constraints,optional"`
	ConsRange   hcl.Range    `hcl:"constraints,attr_value_range"`
	Spread      []string     `hcl:"spread,optional"`
	Restart     *restartBody `hcl:"restart,block"`
	Tasks       []taskBody   `hcl:"task,block"`
	DefRange    hcl.Range    `hcl:",def_range"`
}

type taskBody struct {
	Name           string            `hcl:"name,label"`
	NameRange      hcl.Range         `hcl:"name,label_range"`
	Command        string            `hcl:"command"`
	CommandRange   hcl.Range         `hcl:"command,attr_value_range"`
	Args           []string          `hcl:"args,optional"`
	Shell          bool              `hcl:"shell,optional"`
	Env            map[string]string `hcl:"env,optional"`
	EnvRange       hcl.Range         `hcl:"env,attr_value_range"`
	User           string            `hcl:"user,optional"`
	KillGrace      string            `hcl:"kill_grace,optional"`
	KillGraceRange hcl.Range         `hcl:"kill_grace,attr_value_range"`
	Resources      *resourcesBody    `hcl:"resources,block"`
	Artifacts      []artifactBody    `hcl:"artifact,block"`
	Check          *checkBody        `hcl:"check,block"`
	DefRange       hcl.Range         `hcl:",def_range"`
}

type resourcesBody struct {
	CPUs          *float64  `hcl:"cpus,optional"`
	CPUsRange     hcl.Range `hcl:"cpus,attr_value_range"`
	Mem           string    `hcl:"mem,optional"`
	MemRange      hcl.Range `hcl:"mem,attr_value_range"`
	Disk          string    `hcl:"disk,optional"`
	DiskRange     hcl.Range `hcl:"disk,attr_value_range"`
	Ports         int       `hcl:"ports,optional"`
	PortsRange    hcl.Range `hcl:"ports,attr_value_range"`
	GPUs          int       `hcl:"gpus,optional"`
	GPUsRange     hcl.Range `hcl:"gpus,attr_value_range"`
	GPUShare      float64   `hcl:"gpu_share,optional"`
	GPUShareRange hcl.Range `hcl:"gpu_share,attr_value_range"`
}

type artifactBody struct {
	Source      string    `hcl:"source"`
	SourceRange hcl.Range `hcl:"source,attr_value_range"`
	Sha256      string    `hcl:"sha256,optional"`
	ShaRange    hcl.Range `hcl:"sha256,attr_value_range"`
	Destination string    `hcl:"destination,optional"`
	DestRange   hcl.Range `hcl:"destination,attr_value_range"`
	Extract     bool      `hcl:"extract,optional"`
	Executable  bool      `hcl:"executable,optional"`
}

type checkBody struct {
	Type          string    `hcl:"type"`
	TypeRange     hcl.Range `hcl:"type,attr_value_range"`
	Command       string    `hcl:"command,optional"`
	Path          string    `hcl:"path,optional"`
	Port          int       `hcl:"port,optional"`
	PortRange     hcl.Range `hcl:"port,attr_value_range"`
	Interval      string    `hcl:"interval,optional"`
	IntervalRange hcl.Range `hcl:"interval,attr_value_range"`
	Timeout       string    `hcl:"timeout,optional"`
	TimeoutRange  hcl.Range `hcl:"timeout,attr_value_range"`
	Grace         string    `hcl:"grace_period,optional"`
	GraceRange    hcl.Range `hcl:"grace_period,attr_value_range"`
	Failures      int       `hcl:"consecutive_failures,optional"`
	DefRange      hcl.Range `hcl:",def_range"`
}

type restartBody struct {
	Attempts      *int      `hcl:"attempts,optional"`
	AttemptsRange hcl.Range `hcl:"attempts,attr_value_range"`
	Interval      string    `hcl:"interval,optional"`
	IntervalRange hcl.Range `hcl:"interval,attr_value_range"`
	Delay         string    `hcl:"delay,optional"`
	DelayRange    hcl.Range `hcl:"delay,attr_value_range"`
	Backoff       *float64  `hcl:"backoff,optional"`
	BackoffRange  hcl.Range `hcl:"backoff,attr_value_range"`
	MaxDelay      string    `hcl:"max_delay,optional"`
	MaxDelayRange hcl.Range `hcl:"max_delay,attr_value_range"`
	Mode          string    `hcl:"mode,optional"`
	ModeRange     hcl.Range `hcl:"mode,attr_value_range"`
}

type updateBody struct {
	MaxParallel     *int      `hcl:"max_parallel,optional"`
	MaxRange        hcl.Range `hcl:"max_parallel,attr_value_range"`
	MinHealthyTime  string    `hcl:"min_healthy_time,optional"`
	MinHealthyRange hcl.Range `hcl:"min_healthy_time,attr_value_range"`
	HealthyDeadline string    `hcl:"healthy_deadline,optional"`
	DeadlineRange   hcl.Range `hcl:"healthy_deadline,attr_value_range"`
	AutoRevert      bool      `hcl:"auto_revert,optional"`
}

type periodicBody struct {
	Cron            string    `hcl:"cron"`
	CronRange       hcl.Range `hcl:"cron,attr_value_range"`
	ProhibitOverlap bool      `hcl:"prohibit_overlap,optional"`
	TimeZone        string    `hcl:"time_zone,optional"`
	TimeZoneRange   hcl.Range `hcl:"time_zone,attr_value_range"`
}
