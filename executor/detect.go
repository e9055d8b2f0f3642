package executor

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// Detected resource defaults.
const (
	// DefaultPortsBegin and DefaultPortsEnd bound the ports an agent offers
	// unless configured.
	DefaultPortsBegin = 31000
	DefaultPortsEnd   = 32000
	// memReserveMin and memReserveMax bound the memory kept back for the
	// system and the agent: a tenth of the total, within these bounds (MiB).
	memReserveMin = 256
	memReserveMax = 2048
)

// DetectResources returns this machine's resources: cpus (milli-CPUs,
// runtime.NumCPU()*1000), mem (MiB of /proc/meminfo's MemTotal minus a
// reserve of a tenth, at least 256 MiB and at most 2 GiB), disk (MiB free
// in workDir, which must exist) and ports 31000-32000. It fails, wrapping
// ErrDetect, when the memory cannot be read.
func DetectResources(workDir string) (protocol.Resources, error) {
	total, err := memTotalMiB("/proc/meminfo")
	if err != nil {
		return protocol.Resources{}, fmt.Errorf("%w: memory: %w", ErrDetect, err)
	}
	reserve := min(max(total/10, memReserveMin), memReserveMax)
	res := protocol.Resources{
		Scalars: map[string]int64{
			protocol.ResCPUs: int64(runtime.NumCPU()) * 1000,
			protocol.ResMem:  max(total-reserve, 0),
		},
		Ranges: map[string]protocol.Ranges{
			protocol.ResPorts: {{Begin: DefaultPortsBegin, End: DefaultPortsEnd}},
		},
	}
	disk, err := diskFreeMiB(workDir)
	if err != nil {
		return protocol.Resources{}, fmt.Errorf("%w: disk: %w", ErrDetect, err)
	}
	if disk > 0 {
		res.Scalars[protocol.ResDisk] = disk
	}
	return res, nil
}

// DetectAttributes returns the attributes an agent reports unless
// configured otherwise: hostname, os, arch, kernel (the kernel release)
// and cpu_model, each when it can be read.
func DetectAttributes() protocol.Attributes {
	attrs := protocol.Attributes{
		"os":   protocol.Text(runtime.GOOS),
		"arch": protocol.Text(runtime.GOARCH),
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		attrs["hostname"] = protocol.Text(h)
	}
	if k := kernelRelease(); k != "" {
		attrs["kernel"] = protocol.Text(k)
	}
	if m := cpuModel("/proc/cpuinfo"); m != "" {
		attrs["cpu_model"] = protocol.Text(m)
	}
	return attrs
}

// memTotalMiB reads MemTotal from a meminfo file.
func memTotalMiB(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		kib, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kib < 0 {
			return 0, fmt.Errorf("MemTotal %q: not a number", fields[0])
		}
		return kib / 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no MemTotal in %s", path)
}

// cpuModel returns the first "model name" of a cpuinfo file, or "".
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return truncateText(strings.TrimSpace(v), protocol.MaxNameLen)
		}
	}
	return ""
}

// kernelRelease returns the running kernel's release (uname -r), or "".
func kernelRelease() string {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return truncateText(strings.TrimSpace(string(data)), protocol.MaxNameLen)
}

// truncateText cuts s to at most n bytes without leaving a partial rune.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
