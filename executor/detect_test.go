//go:build linux

package executor

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestDetectResources(t *testing.T) {
	t.Parallel()
	res, err := DetectResources(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Scalar(protocol.ResCPUs); got != int64(runtime.NumCPU())*1000 {
		t.Errorf("cpus %d, want %d", got, runtime.NumCPU()*1000)
	}
	if res.Scalar(protocol.ResMem) <= 0 || res.Scalar(protocol.ResDisk) <= 0 {
		t.Errorf("mem or disk missing: %s", res)
	}
	if want := (protocol.Ranges{{Begin: 31000, End: 32000}}); !res.Ranges[protocol.ResPorts].ContainsAll(want) || res.Ranges[protocol.ResPorts].Count() != want.Count() {
		t.Errorf("ports %v, want %v", res.Ranges[protocol.ResPorts], want)
	}
	if err := res.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDetectAttributes(t *testing.T) {
	t.Parallel()
	attrs := DetectAttributes()
	if attrs["os"].Text != runtime.GOOS || attrs["arch"].Text != runtime.GOARCH {
		t.Fatalf("got %v", attrs)
	}
	for _, k := range []string{"hostname", "kernel"} {
		if attrs[k].Text == "" {
			t.Errorf("attribute %s missing: %v", k, attrs)
		}
	}
}

func TestMemTotalAndCPUModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mi := write("meminfo", "MemFree:  100 kB\nMemTotal:       16384000 kB\n")
	if got, err := memTotalMiB(mi); err != nil || got != 16000 {
		t.Fatalf("got %d, %v; want 16000", got, err)
	}
	if _, err := memTotalMiB(write("bad", "MemTotal: lots kB\n")); err == nil {
		t.Fatal("bad MemTotal accepted")
	}
	if _, err := memTotalMiB(write("none", "MemFree: 1 kB\n")); err == nil {
		t.Fatal("missing MemTotal accepted")
	}
	ci := write("cpuinfo", "processor\t: 0\nmodel name\t: Example CPU @ 3.00GHz\n")
	if got := cpuModel(ci); got != "Example CPU @ 3.00GHz" {
		t.Fatalf("cpu model %q", got)
	}
	if got := truncateText("héllo", 2); got != "h" {
		t.Fatalf("truncateText cut a rune: %q", got)
	}
}
