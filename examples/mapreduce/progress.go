package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// progress follows the run's jobs stage by stage: when each stage's first
// task started and its last finished, and how many of its tasks have
// finished. On a terminal it keeps one status line up to date; otherwise
// (and unless quiet) it prints a line as each task finishes.
type progress struct {
	out   *printer
	tty   bool
	quiet bool

	mu     sync.Mutex
	stages map[[2]string]*stageProgress // (job, stage)
	order  [][2]string
}

// stageProgress is one stage of one job.
type stageProgress struct {
	tasks         int
	done          int
	first, last   time.Time // first task running, last task finished
	finishedTasks map[int]bool
}

func newProgress(out *printer, quiet bool) *progress {
	return &progress{out: out, quiet: quiet, tty: isTerminal(out.w), stages: map[[2]string]*stageProgress{}}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// job registers a job's stages and their task counts.
func (p *progress) job(id string, maps, reducers int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range []struct {
		name  string
		tasks int
	}{{stageMap, maps}, {stageReduce, reducers}} {
		k := [2]string{id, s.name}
		p.stages[k] = &stageProgress{tasks: s.tasks, finishedTasks: map[int]bool{}}
		p.order = append(p.order, k)
	}
}

// running notes that a task of a stage runs.
func (p *progress) running(key taskKey, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.stages[[2]string{key.job, key.stage}]; s != nil && s.first.IsZero() {
		s.first = now
	}
}

// finished notes a task's first finish; line describes it.
func (p *progress) finished(key taskKey, now time.Time, line string) {
	p.mu.Lock()
	s := p.stages[[2]string{key.job, key.stage}]
	if s == nil || s.finishedTasks[key.index] {
		p.mu.Unlock()
		return
	}
	s.finishedTasks[key.index] = true
	s.done++
	s.last = now
	if s.first.IsZero() {
		s.first = now
	}
	// Printed under the lock, so that lines and the status line come out
	// in the order of the finishes they count.
	switch {
	case p.quiet:
	case p.tty:
		p.out.printf("\r\033[K%s", p.statusLocked())
	default:
		p.out.printf("%s (%d/%d)\n", line, s.done, s.tasks)
	}
	p.mu.Unlock()
}

// statusLocked is the status line: each unfinished job's stages.
func (p *progress) statusLocked() string {
	var parts []string
	var job string
	for _, k := range p.order {
		s := p.stages[k]
		if k[0] != job {
			job = k[0]
			parts = append(parts, job+":")
		}
		bar := strings.Repeat("#", 10*s.done/max(s.tasks, 1))
		parts = append(parts, fmt.Sprintf("%s [%-10s] %d/%d", k[1], bar, s.done, s.tasks))
	}
	return strings.Join(parts, " ")
}

// clearLine clears the status line before other output, on a terminal.
func (p *progress) clearLine() {
	if p.tty && !p.quiet {
		p.out.printf("\r\033[K")
	}
}

// stageTimes returns each stage of job in order with its time from its
// first task's start to its last task's finish.
func (p *progress) stageTimes(job string) []stageTime {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []stageTime
	for _, k := range p.order {
		if k[0] != job {
			continue
		}
		s := p.stages[k]
		t := stageTime{Name: k[1], Tasks: s.tasks}
		if !s.first.IsZero() && s.done == s.tasks {
			t.Time = s.last.Sub(s.first)
		}
		out = append(out, t)
	}
	return slices.Clip(out)
}

// stageTime is how long a stage took.
type stageTime struct {
	Name  string
	Tasks int
	Time  time.Duration
}
