package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestStallMeter_countsAStoppedProcess: the process stopped for 100 ms
// (SIGSTOP, continued by a child: a machine whose cores other work holds,
// at its worst) shows in the meter, and nothing before start does.
func TestStallMeter_countsAStoppedProcess(t *testing.T) {
	m := MeterStalls(t)
	start := time.Now()
	stopProcessFor(t, 100*time.Millisecond)
	err := Poll(5*time.Second, time.Millisecond, func() error {
		if got := m.Since(start); got < 60*time.Millisecond {
			return fmt.Errorf("stalls since start %v, want at least 60ms", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Since(time.Now()); got != 0 {
		t.Fatalf("stalls since now: %v, want 0", got)
	}
}

// stopProcessFor stops this process and has a child continue it d after
// it sees it stopped.
func stopProcessFor(t *testing.T, d time.Duration) {
	t.Helper()
	script := fmt.Sprintf(`while [ "$(cut -d' ' -f3 /proc/%[1]d/stat)" != T ]; do sleep 0.01; done; sleep %.3[2]f; kill -CONT %[1]d`,
		os.Getpid(), d.Seconds())
	cont := exec.Command("sh", "-c", script)
	if err := cont.Start(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := cont.Wait(); err != nil {
		t.Fatal(err)
	}
}
