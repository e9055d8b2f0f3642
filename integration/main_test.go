package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path"
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
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// binaries are the programs built once for the tests and benchmarks that
// run them as separate processes, by package path relative to the module.
var binaries struct {
	mu    sync.Mutex
	dir   string
	err   error
	built map[string]*builtBinary
}

type builtBinary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// allotBinary builds cmd/allot (once per test binary, with the race
// detector when the tests have it, so the build reuses their compiled
// packages) and returns its path. A race-enabled binary run by a test
// needs GORACE=atexit_sleep_ms=0, or every process it starts lingers a
// second on exit.
func allotBinary(tb testing.TB) string { return buildBinary(tb, "cmd/allot") }

// exampleBinary builds examples/<name> the same way and returns its path.
func exampleBinary(tb testing.TB, name string) string { return buildBinary(tb, "examples/"+name) }

// exampleBinaryNoRace builds examples/<name> without the race detector,
// whose shadow memory would count against the memory its tasks ask for:
// for tests that measure a worker's memory. The race detector covers the
// worker's code in its own package's tests.
func exampleBinaryNoRace(tb testing.TB, name string) string {
	return buildBinaryAs(tb, "examples/"+name, false)
}

// buildBinary builds the main package at pkg (relative to the module
// root) once per test binary and returns the executable's path.
func buildBinary(tb testing.TB, pkg string) string { return buildBinaryAs(tb, pkg, raceEnabled) }

// buildBinaryAs builds pkg with the race detector or without it.
func buildBinaryAs(tb testing.TB, pkg string, race bool) string {
	tb.Helper()
	binaries.mu.Lock()
	if binaries.dir == "" && binaries.err == nil {
		binaries.dir, binaries.err = os.MkdirTemp("", "allot-integration-")
	}
	if binaries.built == nil {
		binaries.built = map[string]*builtBinary{}
	}
	key := fmt.Sprint(pkg, " race=", race)
	b := binaries.built[key]
	if b == nil {
		b = &builtBinary{}
		binaries.built[key] = b
	}
	dir, err := binaries.dir, binaries.err
	binaries.mu.Unlock()
	if err != nil {
		tb.Fatalf("temporary directory for binaries: %v", err)
	}
	b.once.Do(func() {
		b.path = filepath.Join(dir, path.Base(pkg))
		if race != raceEnabled {
			b.path += fmt.Sprint("-race-", race)
		}
		args := []string{"build", "-o", b.path}
		if race {
			args = append(args, "-race")
		}
		b.out, b.err = exec.Command("go", append(args, "../"+pkg)...).CombinedOutput()
	})
	if b.err != nil {
		tb.Fatalf("go build ../%s: %v\n%s", pkg, b.err, b.out)
	}
	return b.path
}
