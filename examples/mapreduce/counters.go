package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// countersFile is what every task leaves in its sandbox: its counters
// (taskCounters as JSON), which the framework sums per stage.
const countersFile = "counters.json"

// taskCounters are one task attempt's counters, as Hadoop's job counters
// count them: records and bytes in and out, what spilled to disk, and
// for a reducer what its shuffle fetched.
type taskCounters struct {
	Stage string `json:"stage"`
	// RecordsIn and BytesIn are what the task read: a map's input lines,
	// a reducer's fetched lines.
	RecordsIn int64 `json:"records_in"`
	BytesIn   int64 `json:"bytes_in"`
	// RecordsOut and BytesOut are what it wrote: a map's partition
	// files, a reducer's output.
	RecordsOut int64 `json:"records_out"`
	BytesOut   int64 `json:"bytes_out"`
	// Spills counts the times the buffer filled; SpilledBytes is what
	// those spills wrote to disk.
	Spills       int   `json:"spills"`
	SpilledBytes int64 `json:"spilled_bytes"`
	// Shuffle is a reducer's fetches.
	Shuffle *shuffleStats `json:"shuffle,omitempty"`
	// PeakRSS is the most resident memory the task's process held (0
	// where the system does not say); MemoryLimit its memory request.
	PeakRSS     int64 `json:"peak_rss_bytes"`
	MemoryLimit int64 `json:"memory_limit_bytes"`
	// AgentPeak is the most memory the task's processes held as its agent
	// measured it and reported it in the task's final status (whole MiB,
	// rounded up; 0 when the agent did not say). The framework fills it.
	AgentPeak int64   `json:"agent_peak_memory_bytes"`
	Seconds   float64 `json:"seconds"`
}

// finish records the task's time and peak memory, and writes the
// counters in dir.
func (c *taskCounters) finish(dir string, start time.Time) error {
	c.Seconds = time.Since(start).Seconds()
	c.PeakRSS = peakRSS()
	js, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, countersFile), js)
}

// add sums o into c (the stage's totals).
func (c *taskCounters) add(o taskCounters) {
	c.RecordsIn += o.RecordsIn
	c.BytesIn += o.BytesIn
	c.RecordsOut += o.RecordsOut
	c.BytesOut += o.BytesOut
	c.Spills += o.Spills
	c.SpilledBytes += o.SpilledBytes
	if o.Shuffle != nil {
		if c.Shuffle == nil {
			c.Shuffle = &shuffleStats{}
		}
		c.Shuffle.Partitions += o.Shuffle.Partitions
		c.Shuffle.Bytes += o.Shuffle.Bytes
		c.Shuffle.Remote += o.Shuffle.Remote
		c.Shuffle.RemoteBytes += o.Shuffle.RemoteBytes
	}
	c.PeakRSS = max(c.PeakRSS, o.PeakRSS)
	c.AgentPeak = max(c.AgentPeak, o.AgentPeak)
	c.MemoryLimit = max(c.MemoryLimit, o.MemoryLimit)
	c.Seconds += o.Seconds
}

// peakRSS is the process's peak resident memory (VmHWM), or 0 where
// /proc does not say.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := bytes.CutPrefix(s.Bytes(), []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// A task's memory: the framework tells the worker's Go runtime to stay
// within memoryLimitShare of the task's memory request (GOMEMLIMIT in the
// task's environment), and the worker's buffer (what it sorts or counts in
// memory before spilling) is bufferShare of it; the rest is the
// runtime's, the binary's and the I/O buffers'. Without a request the
// buffer is defaultBuffer.
const (
	memoryLimitShare = 0.6
	bufferShare      = 0.25
	defaultBuffer    = 64 << 20
)

// bufferFor is the buffer of a task with memMiB of memory, in bytes.
func bufferFor(memMiB int64) int64 {
	if memMiB <= 0 {
		return defaultBuffer
	}
	return int64(float64(memMiB<<20) * bufferShare)
}

// memoryLimitEnv is the GOMEMLIMIT of a worker with memMiB of memory.
func memoryLimitEnv(memMiB int64) string {
	return strconv.FormatInt(int64(float64(memMiB<<20)*memoryLimitShare), 10)
}
