package master

import (
	"net/http"

	"github.com/allot-project/allot/master/api"
)

// The jobs pages: every job the reader may see, and one job with its
// instances and its file (http_jobs.go reads them from the stores).

// uiJobsPage and uiJobPage are what the jobs pages render.
type uiJobsPage struct {
	Jobs []uiJobRow
}

type uiJobRow struct {
	Job                                       api.Job
	Running, Starting, Finished, Failed, Kept int
}

type uiJobPage struct {
	Job api.Job
}

func (m *Master) serveUIJobs(w http.ResponseWriter, _ *http.Request, v viewer) {
	var p uiJobsPage
	for _, j := range m.jobsFor(v) {
		row := uiJobRow{Job: j, Kept: len(j.Versions)}
		for _, in := range j.Instances {
			switch in.State {
			case "running":
				row.Running++
			case "starting":
				row.Starting++
			case "finished":
				row.Finished++
			case "failed":
				row.Failed++
			}
		}
		p.Jobs = append(p.Jobs, row)
	}
	renderUI(w, "jobs", p)
}

func (m *Master) serveUIJob(w http.ResponseWriter, r *http.Request, v viewer) {
	j, ok := m.jobFor(v, r.PathValue("principal"), r.PathValue("name"))
	if !ok {
		uiNotFound(w, "job", r.PathValue("name"))
		return
	}
	renderUI(w, "job", uiJobPage{Job: j})
}
