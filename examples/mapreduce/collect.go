package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// collectCounters reads the counters of the latest finished attempt of
// every task of job j from its sandbox, and sums them by stage, with the
// peak memory the tasks' agents reported.
func collectCounters(ctx context.Context, j *runJob, f *roleFramework, files *fileClient) ([]stageReport, error) {
	var out []stageReport
	for _, st := range f.prog.stageTimes(j.spec.ID) {
		rep := stageReport{stageTime: st}
		for i := range st.Tasks {
			fin, sandbox, ok := f.output(j.spec.ID, st.Name, i)
			if !ok {
				return out, fmt.Errorf("%s %d: no finished attempt known", st.Name, i)
			}
			data, err := files.get(ctx, fin.addr, sandbox+"/"+countersFile)
			var c taskCounters
			if err == nil {
				err = json.Unmarshal(data, &c)
			}
			if err != nil {
				return out, fmt.Errorf("%s %d: counters: %w", st.Name, i, err)
			}
			c.AgentPeak = fin.memPeak
			rep.Counters.add(c)
		}
		out = append(out, rep)
	}
	return out, nil
}

// sandboxOutputs names each reducer's output file of job j on its
// agent's file server.
func sandboxOutputs(j *runJob, f *roleFramework) []string {
	var out []string
	for r := range j.spec.Reducers {
		fin, sandbox, ok := f.output(j.spec.ID, stageReduce, r)
		if !ok {
			continue
		}
		out = append(out, "http://"+fin.addr+"/v1/files/download?"+url.Values{"path": {sandbox + "/" + outputFile}}.Encode())
	}
	return out
}
