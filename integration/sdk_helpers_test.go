package integration

import (
	"time"

	"github.com/allot-project/allot/internal/sdktest"
)

// The helpers below serve the TestAgent_* tests: SDK frameworks
// (framework.Driver) against real agents (executors).

// sdkWait bounds every wait in the agent tests.
const sdkWait = 20 * time.Second

// newRecorder bounds the recorder's waits like every other wait of the
// agent tests: real agents start processes, slower than the SDK's fakes.
func newRecorder() *sdktest.Recorder { return &sdktest.Recorder{Timeout: sdkWait} }
