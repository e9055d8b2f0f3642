package integration

import (
	"testing"

	"github.com/allot-project/allot/internal/testcluster/executors"
)

// The test binary doubles as the task shim of the real agents the tests
// start (see executors.Main).
func TestMain(m *testing.M) { executors.Main(m) }
