package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/allot-project/allot/internal/testcluster/executors"
)

// The test binary doubles as the task shim of the real agents the tests
// start in-process (see executors.ServeShim).
func TestMain(m *testing.M) {
	executors.ServeShim()
	code := m.Run()
	if allot.dir != "" {
		os.RemoveAll(allot.dir)
	}
	os.Exit(code)
}

// allot is the allot binary, built once for the tests and benchmarks that
// run it as a separate process.
var allot struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// allotBinary builds cmd/allot (once per test binary, with the race
// detector when the tests have it, so the build reuses their compiled
// packages) and returns its path. A race-enabled binary run by a test
// needs GORACE=atexit_sleep_ms=0, or every process it starts lingers a
// second on exit.
func allotBinary(tb testing.TB) string {
	tb.Helper()
	allot.once.Do(func() {
		if allot.dir, allot.err = os.MkdirTemp("", "allot-integration-"); allot.err != nil {
			return
		}
		allot.path = filepath.Join(allot.dir, "allot")
		args := []string{"build", "-o", allot.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		allot.out, allot.err = exec.Command("go", append(args, "../cmd/allot")...).CombinedOutput()
	})
	if allot.err != nil {
		tb.Fatalf("go build ../cmd/allot: %v\n%s", allot.err, allot.out)
	}
	return allot.path
}
