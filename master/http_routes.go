package master

import (
	"net/http"
)

// route is one endpoint of the operator HTTP API. A new endpoint is one
// entry in routes: its method and path as http.ServeMux reads them, what
// it does, and its handler (in a file of its own, http_*.go or ui_*.go);
// its JSON types and client method go in master/api.
type route struct {
	pattern string
	about   string
	handler http.HandlerFunc
}

// routes lists the operator HTTP API. Reads that show frameworks go
// through the reader's view (http_viewer.go); endpoints served by the
// leader only make a follower redirect (307) to the leader's HTTP address,
// or answer 503 when it does not know it.
func (m *Master) routes() []route {
	return []route{
		{"GET /healthz", `200 "ok" while this master's NATS connection and Raft node are up`, m.serveHealthz},
		{"GET /readyz", `200 "ready" while it is also part of a quorum: it knows a leader, hears from it, and has applied what was committed; else 503 with the reason`, m.serveReadyz},
		{"GET /v1/leader", "who leads, answered by every master itself (api.Leader)", m.serveLeader},
		{"GET /v1/state", "the cluster's state (api.State), as far as the reader may see it", m.viewingLeader(m.serveState)},
		{"GET /metrics", "this master's Prometheus metrics (metrics.go)", m.metrics.handler().ServeHTTP},
		{"GET /v1/events", "the cluster events as newline-delimited JSON (http_events.go)", m.viewing(m.serveEvents)},
		{"POST /v1/agents/{id}/drain", "drain an agent, with an optional deadline (http_agents.go)", m.operatorOnly(m.leaderOnly(m.serveAgentDrain))},
		{"POST /v1/agents/{id}/activate", "activate a drained agent (http_agents.go)", m.operatorOnly(m.leaderOnly(m.serveAgentActivate))},
		{"POST /v1/agents/{id}/gone", "mark an agent gone for good (http_agents.go)", m.operatorOnly(m.leaderOnly(m.serveAgentGone))},
		{"POST /v1/frameworks/{id}/tasks/{task}/kill", "kill a task, reason killed_by_operator (http_operator.go)", m.operatorOnly(m.leaderOnly(m.serveKillTask))},
		{"POST /v1/frameworks/{id}/teardown", "remove a framework as its own teardown does (http_operator.go)", m.operatorOnly(m.leaderOnly(m.serveTeardown))},
		{"PUT /v1/roles/{path...}", "a role's weight, quota and offer constraints (http_roles.go)", m.operatorOnly(m.leaderOnly(m.serveSetRole))},
		{"GET /v1/frameworks/{id}/explain", "why a framework is or is not offered resources (http_explain.go)", m.viewingLeader(m.serveExplain)},
		{"GET /v1/coflows", "the coflows the leader schedules (http_coflows.go)", m.viewingLeader(m.serveCoflows)},
		{"GET /v1/frameworks/{id}/files-token", "the token that reads a framework's sandboxes (http_files.go)", m.operatorOnly(m.serveFilesToken)},
		{"GET /v1/jobs", "the job runners' jobs the reader may see (http_jobs.go)", m.viewing(m.serveJobs)},
		{"GET /v1/jobs/{principal}/{name}", "one job, with its job file (http_jobs.go)", m.viewing(m.serveJob)},
		{"POST /v1/jobs/{principal}", "submit or check a job file (http_jobs_change.go)", m.viewingLeader(m.serveSubmitJob)},
		{"POST /v1/jobs/{principal}/{name}/stop", "stop a job (http_jobs_change.go)", m.viewingLeader(m.serveStopJob)},
		{"POST /v1/jobs/{principal}/{name}/revert", "a kept version's file as a job's next version (http_jobs_change.go)", m.viewingLeader(m.serveRevertJob)},
		{"GET /v1/operator/raft/peers", "the masters' Raft membership (http_raft.go)", m.serveRaftPeers},
		{"POST /v1/operator/raft/peers", "add a master to the Raft membership (http_raft.go)", m.operatorOnly(m.leaderOnly(m.serveAddRaftPeer))},
		{"DELETE /v1/operator/raft/peers/{id}", "remove a master from the Raft membership (http_raft.go)", m.operatorOnly(m.leaderOnly(m.serveRemoveRaftPeer))},
		{"GET /v1/operator/snapshot", "back the replicated state up (http_snapshot.go)", m.operatorOnly(m.leaderOnly(m.serveSnapshotSave))},
		{"PUT /v1/operator/snapshot", "restore the replicated state from a backup (http_snapshot.go)", m.operatorOnly(m.leaderOnly(m.serveSnapshotRestore))},
		{"GET /ui/", "the web UI's overview (ui.go)", m.viewingLeader(m.serveUI)},
		{"GET /ui/ui.js", "the web UI's script (ui.js)", m.serveUIScript},
		{"GET /ui/agents/{id}", "an agent's page (ui_pages.go)", m.viewingLeader(m.serveUIAgent)},
		{"GET /ui/frameworks/{id}", "a framework's page (ui_pages.go)", m.viewingLeader(m.serveUIFramework)},
		{"GET /ui/frameworks/{id}/tasks/{task}", "a task's page (ui_pages.go)", m.viewingLeader(m.serveUITask)},
		{"GET /ui/frameworks/{id}/tasks/{task}/{file}", "a task's stdout, stderr, sandbox or a file of it (ui_log.go)", m.viewingLeader(m.serveUILog)},
		{"GET /ui/roles/{path...}", "a role's page (ui_pages.go)", m.viewingLeader(m.serveUIRole)},
		{"GET /ui/jobs", "the jobs page (ui_jobs.go)", m.viewing(m.serveUIJobs)},
		{"GET /ui/jobs/{principal}/{name}", "a job's page (ui_jobs.go)", m.viewing(m.serveUIJob)},
		{"GET /{$}", "redirects to the web UI", http.RedirectHandler("/ui/", http.StatusFound).ServeHTTP},
	}
}

// httpHandler routes the operator API.
func (m *Master) httpHandler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range append(m.routes(), m.debugRoutes()...) {
		mux.HandleFunc(r.pattern, r.handler)
	}
	return mux
}
