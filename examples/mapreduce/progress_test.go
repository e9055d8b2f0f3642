package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestProgress_Lines(t *testing.T) {
	t.Parallel()
	mapKey := func(i int) taskKey { return taskKey{job: "wc", stage: stageMap, index: i} }
	reduceKey := taskKey{job: "wc", stage: stageReduce, index: 0}
	now := time.Unix(1000, 0)
	tests := []struct {
		name  string
		quiet bool
		want  string
	}{
		{name: "loud", want: "map 1 (1/2)\nmap 0 (2/2)\nreduce 0 (1/1)\n"},
		{name: "quiet", quiet: true, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			p := newProgress(&printer{w: &buf}, tc.quiet)
			if p.tty {
				t.Fatal("a bytes.Buffer taken for a terminal")
			}
			p.job("wc", 2, 1)
			p.running(mapKey(0), now)
			p.running(mapKey(1), now)
			p.finished(mapKey(1), now, "map 1")
			// A later attempt's finish, or the same status again, is
			// not another task.
			p.finished(mapKey(1), now, "map 1 again")
			p.finished(mapKey(0), now, "map 0")
			// Tasks of jobs and stages it does not follow are ignored.
			p.finished(taskKey{job: "other", stage: stageMap}, now, "other job")
			p.finished(taskKey{job: "wc", stage: "combine"}, now, "other stage")
			p.finished(reduceKey, now, "reduce 0")
			p.finished(reduceKey, now, "reduce 0 again")
			p.clearLine()
			if got := buf.String(); got != tc.want {
				t.Errorf("printed %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProgress_StatusLine: on a terminal, each finish redraws one status
// line of every job's stages.
func TestProgress_StatusLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&printer{w: &buf}, false)
	p.tty = true // as isTerminal finds a terminal
	p.job("wc", 2, 1)
	p.job("sort", 4, 3)
	now := time.Unix(1000, 0)
	p.finished(taskKey{job: "wc", stage: stageMap, index: 0}, now, "not printed")
	p.finished(taskKey{job: "sort", stage: stageReduce, index: 2}, now, "not printed")
	p.clearLine()
	want := "\r\033[Kwc: map [#####     ] 1/2 reduce [          ] 0/1 sort: map [          ] 0/4 reduce [          ] 0/3" +
		"\r\033[Kwc: map [#####     ] 1/2 reduce [          ] 0/1 sort: map [          ] 0/4 reduce [###       ] 1/3" +
		"\r\033[K"
	if got := buf.String(); got != want {
		t.Errorf("printed\n%q\nwant\n%q", got, want)
	}
}

func TestIsTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer taken for a terminal")
	}
}

func TestProgress_StageTimes(t *testing.T) {
	t.Parallel()
	p := newProgress(&printer{w: &bytes.Buffer{}}, true)
	p.job("wc", 2, 1)
	p.job("other", 1, 1)
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	m := func(i int) taskKey { return taskKey{job: "wc", stage: stageMap, index: i} }
	r := taskKey{job: "wc", stage: stageReduce}
	check := func(when string, mapTime, reduceTime time.Duration) {
		t.Helper()
		want := []stageTime{{Name: stageMap, Tasks: 2, Time: mapTime}, {Name: stageReduce, Tasks: 1, Time: reduceTime}}
		if got := p.stageTimes("wc"); !slices.Equal(got, want) {
			t.Errorf("%s: stageTimes %+v, want %+v", when, got, want)
		}
	}
	check("before anything ran", 0, 0)
	p.running(m(0), at(1))
	p.running(m(1), at(2))
	p.finished(m(0), at(5), "")
	check("one map of two finished", 0, 0)
	// Another job's tasks count for that job only.
	p.running(taskKey{job: "other", stage: stageMap}, at(0))
	p.finished(taskKey{job: "other", stage: stageMap}, at(100), "")
	p.finished(m(1), at(7), "")
	check("maps finished", 6*time.Second, 0)
	// A repeated status neither starts nor ends the stage again.
	p.running(m(1), at(8))
	p.finished(m(1), at(9), "")
	check("a map's finish repeated", 6*time.Second, 0)
	p.running(r, at(8))
	check("reducer running", 6*time.Second, 0)
	p.finished(r, at(11), "")
	check("all finished", 6*time.Second, 3*time.Second)
	if got := p.stageTimes("nope"); len(got) != 0 {
		t.Errorf("stageTimes of an unknown job: %+v", got)
	}
}

// TestProgress_ConcurrentFinishes: tasks of one stage finishing at once
// (several roles' drivers share the progress) each print their own
// count: one line each for 1 to n.
func TestProgress_ConcurrentFinishes(t *testing.T) {
	t.Parallel()
	const n = 50
	var buf bytes.Buffer
	p := newProgress(&printer{w: &buf}, false)
	p.job("wc", n, 1)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			p.finished(taskKey{job: "wc", stage: stageMap, index: i}, time.Now(), "map")
		})
	}
	close(start)
	wg.Wait()
	var got []string
	for l := range strings.Lines(buf.String()) {
		got = append(got, strings.TrimSuffix(l, "\n"))
	}
	slices.Sort(got)
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("map (%d/%d)", i, n))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("printed %q, want %q in some order", got, want)
	}
}
