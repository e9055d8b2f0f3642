package master

import (
	"net/http"
	"slices"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// The jobs pages: every job the reader may see, and one job with its
// instances and its file (http_jobs.go reads them from the stores).

// uiJobsPage and uiJobPage are what the jobs pages render. Principal is
// whose jobs a job file is submitted as, from the jobs page: the
// reader's own, or for the operator the one it types (Principals lists
// those the masters know).
type uiJobsPage struct {
	Jobs       []uiJobRow
	Operator   bool
	Principal  string
	Principals []string
}

type uiJobRow struct {
	Job                                       api.Job
	Running, Starting, Finished, Failed, Kept int
}

type uiJobPage struct {
	Job api.Job
}

func (m *Master) serveUIJobs(w http.ResponseWriter, _ *http.Request, v viewer) {
	p := uiJobsPage{Operator: v.operator, Principal: protocol.PrincipalToken(v.principal)}
	if v.operator {
		for name := range m.cfg.Credentials {
			p.Principals = append(p.Principals, name)
		}
		slices.Sort(p.Principals)
		if len(p.Principals) > 0 {
			p.Principal = p.Principals[0]
		}
	}
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
