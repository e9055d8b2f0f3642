package jobs

import (
	"math"
	"time"

	"github.com/robfig/cron/v3"
)

// Restart policy defaults, per job type, as Nomad's: a service restarts
// twice in 30 minutes, a batch job three times in a day, each after 15 s.
var defaultRestart = map[Type]Restart{
	Service: {Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Backoff: 1, Mode: RestartFail},
	Batch:   {Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Backoff: 1, Mode: RestartFail},
}

// DefaultUpdate replaces one instance at a time, each healthy for 10 s
// within 5 minutes.
var DefaultUpdate = Update{MaxParallel: 1, MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}

func (p *problems) restart(b *restartBody, typ Type) Restart {
	r := defaultRestart[typ]
	if r.Mode == "" {
		r = defaultRestart[Service]
	}
	if b == nil {
		return r
	}
	if b.Attempts != nil {
		if *b.Attempts < 0 || *b.Attempts > 1000 {
			p.at(b.AttemptsRange, "restart attempts %d: want 0 to 1000", *b.Attempts)
		}
		r.Attempts = *b.Attempts
	}
	r.Interval = p.duration("restart interval", b.Interval, b.IntervalRange, r.Interval)
	r.Delay = p.duration("restart delay", b.Delay, b.DelayRange, r.Delay)
	r.MaxDelay = p.duration("restart max_delay", b.MaxDelay, b.MaxDelayRange, r.MaxDelay)
	if b.Backoff != nil {
		if f := *b.Backoff; !(f >= 1) || math.IsInf(f, 0) || f > 100 {
			p.at(b.BackoffRange, "restart backoff %v: want a factor from 1 to 100", f)
		} else {
			r.Backoff = f
		}
	}
	switch RestartMode(b.Mode) {
	case "":
	case RestartFail, RestartDelay:
		r.Mode = RestartMode(b.Mode)
	default:
		p.at(b.ModeRange, "restart mode %q: want fail or delay", b.Mode)
	}
	if r.Interval == 0 && r.Attempts > 0 {
		p.at(b.IntervalRange, "restart interval: want more than 0 with attempts")
	}
	return r
}

func (p *problems) update(b *updateBody) Update {
	u := DefaultUpdate
	if b == nil {
		return u
	}
	if b.MaxParallel != nil {
		if *b.MaxParallel < 1 || *b.MaxParallel > MaxCount {
			p.at(b.MaxRange, "update max_parallel %d: want at least 1", *b.MaxParallel)
		}
		u.MaxParallel = *b.MaxParallel
	}
	u.MinHealthyTime = p.duration("update min_healthy_time", b.MinHealthyTime, b.MinHealthyRange, u.MinHealthyTime)
	u.HealthyDeadline = p.duration("update healthy_deadline", b.HealthyDeadline, b.DeadlineRange, u.HealthyDeadline)
	if u.HealthyDeadline <= u.MinHealthyTime {
		p.at(b.DeadlineRange, "update healthy_deadline %v: want more than min_healthy_time %v", u.HealthyDeadline, u.MinHealthyTime)
	}
	u.AutoRevert = b.AutoRevert
	return u
}

// cronParser reads standard five-field expressions and descriptors
// (@hourly, @daily, @every 5m).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

func (p *problems) periodic(b *periodicBody) *Periodic {
	pr := &Periodic{Cron: b.Cron, ProhibitOverlap: b.ProhibitOverlap, TimeZone: b.TimeZone}
	if _, err := cronParser.Parse(b.Cron); err != nil {
		p.at(b.CronRange, "cron %q: %v", b.Cron, err)
	}
	if b.TimeZone != "" {
		if _, err := time.LoadLocation(b.TimeZone); err != nil {
			p.at(b.TimeZoneRange, "time_zone %q: %v", b.TimeZone, err)
		}
	}
	return pr
}

// Next returns the first time after t the schedule fires.
func (pr *Periodic) Next(t time.Time) time.Time {
	s, err := cronParser.Parse(pr.Cron)
	if err != nil {
		return time.Time{}
	}
	loc := time.UTC
	if pr.TimeZone != "" {
		if l, err := time.LoadLocation(pr.TimeZone); err == nil {
			loc = l
		}
	}
	return s.Next(t.In(loc))
}
