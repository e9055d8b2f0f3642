package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Environment the agent gives every task.
const (
	envSandbox    = "ALLOT_SANDBOX"
	envAgentHTTP  = "ALLOT_AGENT_HTTP"
	envFilesToken = "ALLOT_FILES_TOKEN"
	envAgentID    = "ALLOT_AGENT_ID"
	envTaskID     = "ALLOT_TASK_ID"
)

// Files the workers write in their sandboxes.
const (
	// partFile is a map task's output for one reduce partition.
	partFile = "part-"
	// outputFile is a reduce task's result when the job names no
	// output directory.
	outputFile = "output"
	// lostFile is what a reducer that could not fetch some map outputs
	// leaves (lostOutputs as JSON), for the framework to run those maps
	// again.
	lostFile = "lost.json"
)

// lostOutputs names the map outputs a reducer could not fetch: map
// indexes, and the sandboxes it tried them in (a map that has run again
// since has another).
type lostOutputs struct {
	Maps      []int    `json:"maps"`
	Sandboxes []string `json:"sandboxes"`
}

// fetchParallel bounds a reducer's concurrent fetches.
const fetchParallel = 4

// getenv reads the worker's environment (os.Getenv).
type getenv func(string) string

// mapOutput is where a finished map task's partition files are: the file
// server of its agent and its sandbox.
type mapOutput struct {
	Addr    string
	Sandbox string
}

func (m mapOutput) String() string { return m.Addr + "/" + m.Sandbox }

// outputList is a repeatable --from flag.
type outputList []mapOutput

func (l *outputList) String() string { return fmt.Sprint(*l) }

// Type names the flag's values in help.
func (l *outputList) Type() string { return "HOST:PORT/SANDBOX" }

func (l *outputList) Set(s string) error {
	addr, sandbox, ok := strings.Cut(s, "/")
	if !ok || addr == "" || sandbox == "" {
		return fmt.Errorf("%q: want HOST:PORT/SANDBOX", s)
	}
	*l = append(*l, mapOutput{Addr: addr, Sandbox: sandbox})
	return nil
}

// shuffleStats are what a reducer fetched.
type shuffleStats struct {
	// Agent is the reducer's agent's file server.
	Agent string `json:"agent"`
	// Partitions and Bytes count the partition files fetched; Remote
	// and RemoteBytes those fetched from other agents.
	Partitions  int   `json:"partitions"`
	Bytes       int64 `json:"bytes"`
	Remote      int   `json:"remote"`
	RemoteBytes int64 `json:"remote_bytes"`
}

// sandboxDir is where a worker writes its files: its sandbox, or the
// working directory when run by hand.
func sandboxDir(env getenv) string {
	if d := env(envSandbox); d != "" {
		return d
	}
	return "."
}

// writeFileAtomic writes data to path through a temporary file, so that
// readers never see part of it.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// workerTimeout bounds a worker's run.
const workerTimeout = 5 * time.Minute
