//go:build !linux

package runner

import (
	"fmt"
	"os"
	"runtime"

	"github.com/hashicorp/go-hclog"
)

// The runner needs Linux: /proc, subreapers, cgroups.

func platformSupported() error {
	return fmt.Errorf("%w: the task runner needs linux, not %s", ErrUnsupported, runtime.GOOS)
}

// ShimMain fails on this platform.
func ShimMain(args []string) int {
	hclog.New(&hclog.LoggerOptions{Name: "task-shim"}).Error("cannot run", "error", platformSupported())
	return 1
}

func alive(int, uint64) bool                       { return false }
func procStart(int) (uint64, error)                { return 0, platformSupported() }
func setupCgroupParent(string) (string, error)     { return "", platformSupported() }
func setupCgroupV1Parent(string) ([]string, error) { return nil, platformSupported() }
func killOrphan(shimRecord) bool                   { return false }

func openAs(path string, _ *Credential) (*os.File, error) { return os.Open(path) }
