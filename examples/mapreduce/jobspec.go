package main

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// jobKind is what a job computes.
type jobKind string

const (
	// wordCount counts the words of its input.
	wordCount jobKind = "wordcount"
	// sortJob sorts the lines (records) of its input.
	sortJob jobKind = "sort"
)

// Roles the default job mix runs in, and that jobs naming no role
// alternate between when --role is not given.
const (
	roleAnalytics = "analytics"
	roleBatch     = "batch"
)

// defaultJobs is the job mix of a run given neither --jobs, --size nor
// --input: word counts and sorts of different sizes in two roles.
const defaultJobs = "wordcount:8MB@analytics,sort:4MB@analytics,wordcount:2MB@batch,sort:1MB@batch"

// defaultSplitSize is the input a map task reads unless --split-size says
// otherwise: Hadoop's default (its block size). The default job mix, a
// demonstration of a few MB, splits every demoSplitSize instead, so that
// its jobs have several maps. maxReducers caps the default number of
// reducers.
const (
	defaultSplitSize = 128 << 20
	demoSplitSize    = 1 << 20
	maxReducers      = 16
)

// jobSpec is one job of a run.
type jobSpec struct {
	ID   string
	Kind jobKind
	// Size is the input's size: what the generator writes, or the
	// input directory's total.
	Size int64
	// Role is the role of the framework that runs the job.
	Role string
	// Maps and Reducers are the job's task counts.
	Maps, Reducers int
}

// parseJobs reads a --jobs list: comma-separated KIND[:SIZE][@ROLE]
// items, such as "wordcount:2MB@analytics,sort:1MB". A job without a size
// reads the input directory (the caller checks there is one). Jobs that
// name no role take role, or alternate between the two default roles
// when role is empty. Jobs are numbered from 1 in the order given.
func parseJobs(list, role string) ([]jobSpec, error) {
	var out []jobSpec
	unnamed := 0
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		spec, jobRole, _ := strings.Cut(item, "@")
		k, size, sized := strings.Cut(spec, ":")
		kind := jobKind(strings.ToLower(strings.TrimSpace(k)))
		if kind != wordCount && kind != sortJob {
			return nil, fmt.Errorf("job %q: kind %q: want %s or %s (KIND[:SIZE][@ROLE])", item, k, wordCount, sortJob)
		}
		var n int64
		if sized {
			var err error
			if n, err = parseSize(size); err != nil {
				return nil, fmt.Errorf("job %q: %w", item, err)
			}
		}
		if jobRole == "" {
			jobRole = role
		}
		if jobRole == "" {
			jobRole = []string{roleAnalytics, roleBatch}[unnamed%2]
			unnamed++
		}
		if !protocol.ValidRole(jobRole) {
			return nil, fmt.Errorf("job %q: invalid role %q", item, jobRole)
		}
		out = append(out, jobSpec{Kind: kind, Size: n, Role: jobRole})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no jobs in %q", list)
	}
	for i := range out {
		out[i].ID = fmt.Sprintf("%s-%d", out[i].Kind, i+1)
	}
	return out, nil
}

// withTasks sets the job's task counts: maps and reducers when positive,
// otherwise one map task per splitSize of input (at least one) and one
// reducer per two maps (1 to maxReducers).
func (j jobSpec) withTasks(maps, reducers int, splitSize int64) jobSpec {
	j.Maps, j.Reducers = maps, reducers
	if j.Maps <= 0 {
		j.Maps = int(max((j.Size+splitSize-1)/splitSize, 1))
	}
	if j.Reducers <= 0 {
		j.Reducers = min(max(j.Maps/2, 1), maxReducers)
	}
	return j
}
