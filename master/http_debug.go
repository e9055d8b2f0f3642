package master

import "net/http/pprof"

// debugRoutes are the Go runtime's profiles (net/http/pprof), as Nomad's
// enable_debug: served only when Config.EnableDebug is set, and then only
// to the operator, since a CPU profile or trace costs the master time
// while it runs and a goroutine dump shows its inner workings. Each master
// serves its own (no redirect to the leader).
func (m *Master) debugRoutes() []route {
	if !m.cfg.EnableDebug {
		return nil
	}
	return []route{
		{"GET /debug/pprof/", "the runtime's profiles by name: heap, goroutine, allocs... (--enable-debug; http_debug.go)", m.operatorOnly(pprof.Index)},
		{"GET /debug/pprof/cmdline", "this master's command line (--enable-debug)", m.operatorOnly(pprof.Cmdline)},
		{"GET /debug/pprof/profile", "a CPU profile, ?seconds=N (--enable-debug)", m.operatorOnly(pprof.Profile)},
		{"GET /debug/pprof/symbol", "program counters to function names (--enable-debug)", m.operatorOnly(pprof.Symbol)},
		{"GET /debug/pprof/trace", "an execution trace, ?seconds=N (--enable-debug)", m.operatorOnly(pprof.Trace)},
	}
}
