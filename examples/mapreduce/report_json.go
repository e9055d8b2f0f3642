package main

import (
	"encoding/json"
)

// jobJSON is a job's report as --json writes it.
type jobJSON struct {
	ID             string      `json:"id"`
	Kind           jobKind     `json:"kind"`
	Role           string      `json:"role"`
	Input          []string    `json:"input,omitempty"`
	InputBytes     int64       `json:"input_bytes"`
	Maps           int         `json:"maps"`
	Reducers       int         `json:"reducers"`
	Finished       bool        `json:"finished"`
	Error          string      `json:"error,omitempty"`
	JCTSeconds     float64     `json:"jct_seconds"`
	FairTasks      int         `json:"fair_tasks"`
	LeftoverTasks  int         `json:"leftover_tasks"`
	FailedAttempts int         `json:"failed_attempts"`
	Stages         []stageJSON `json:"stages"`
	Outputs        []string    `json:"outputs,omitempty"`
	Verified       bool        `json:"verified"`
	Verdict        string      `json:"verdict,omitempty"`
}

// stageJSON is one stage of a jobJSON.
type stageJSON struct {
	Name     string       `json:"name"`
	Tasks    int          `json:"tasks"`
	Seconds  float64      `json:"seconds"`
	Counters taskCounters `json:"counters"`
}

func (r jobReport) json() jobJSON {
	s := r.job.spec
	out := jobJSON{ID: s.ID, Kind: s.Kind, Role: r.role, Input: r.job.src.paths, InputBytes: s.Size, Maps: s.Maps,
		Reducers: s.Reducers, Finished: r.finished(), JCTSeconds: r.res.JCT.Seconds(), FairTasks: r.res.FairTasks,
		LeftoverTasks: r.res.LeftoverTasks, FailedAttempts: r.res.Failures, Outputs: r.outputs,
		Verified: r.verified && r.err == nil, Verdict: r.verdict}
	if r.err != nil {
		out.Error = r.err.Error()
	}
	for _, st := range r.stages {
		out.Stages = append(out.Stages, stageJSON{Name: st.Name, Tasks: st.Tasks, Seconds: st.Time.Seconds(), Counters: st.Counters})
	}
	return out
}

// writeJSON writes the run's reports to path.
func writeJSON(path string, reports []jobReport) error {
	jobs := make([]jobJSON, len(reports))
	for i, r := range reports {
		jobs[i] = r.json()
	}
	data, err := json.MarshalIndent(struct {
		Jobs []jobJSON `json:"jobs"`
	}{jobs}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}
