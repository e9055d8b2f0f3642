package executor

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// GPU devices (protocol/devices.go). The agent declares each of its GPUs
// as "gpu.<index>" = 1000 besides the total "gpus", and the model as the
// attribute gpu_model (a set when the models differ). A task is told its
// devices in CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES and
// ALLOT_GPUS, and what it holds of each in ALLOT_GPU_SHARES.

// Environment variables for a task's GPU devices.
const (
	// EnvGPUs lists the indices of the task's devices, comma-separated.
	EnvGPUs = "ALLOT_GPUS"
	// EnvGPUShares lists index:milli pairs, comma-separated.
	EnvGPUShares = "ALLOT_GPU_SHARES"
)

// AttrGPUModel is the attribute naming the agent's GPU model(s).
const AttrGPUModel = "gpu_model"

// detectTimeout bounds nvidia-smi.
const detectTimeout = 5 * time.Second

// DetectGPUs lists this machine's GPU models by device index, as
// nvidia-smi reports them; none when it is not installed or fails.
func DetectGPUs(ctx context.Context) []string {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--query-gpu=index,name", "--format=csv,noheader").Output()
	if err != nil {
		return nil
	}
	return parseGPUList(string(out))
}

// parseGPUList reads nvidia-smi's "index, name" lines into models by
// index; lines it cannot read are skipped, and a gap in the indices ends
// the list.
func parseGPUList(out string) []string {
	byIndex := map[int]string{}
	for _, line := range strings.Split(out, "\n") {
		idx, name, ok := strings.Cut(line, ",")
		if !ok {
			continue
		}
		k, err := strconv.Atoi(strings.TrimSpace(idx))
		if err != nil || k < 0 || k >= protocol.MaxDevices {
			continue
		}
		byIndex[k] = strings.Join(strings.Fields(name), "-")
	}
	var models []string
	for k := 0; ; k++ {
		m, ok := byIndex[k]
		if !ok {
			return models
		}
		models = append(models, m)
	}
}

// ParseDevices reads the --devices flag: GPU models by device index,
// comma-separated, with "MODELxN" for N alike ("T4x4,A10" is four T4s
// then an A10); "none" or "" declares none.
func ParseDevices(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		model, count := part, 1
		if i := strings.LastIndex(part, "x"); i > 0 {
			if n, err := strconv.Atoi(part[i+1:]); err == nil {
				model, count = part[:i], n
			}
		}
		if model == "" || count < 1 || strings.ContainsAny(model, " \t") {
			return nil, fmt.Errorf("%w: devices: %q (want MODEL or MODELxN, comma-separated)", ErrConfig, part)
		}
		for range count {
			out = append(out, model)
		}
	}
	if len(out) > protocol.MaxDevices {
		return nil, fmt.Errorf("%w: devices: %d GPUs, at most %d", ErrConfig, len(out), protocol.MaxDevices)
	}
	return out, nil
}

// withGPUs adds the devices of models to total and their model to attrs,
// unless total already names GPUs.
func withGPUs(total protocol.Resources, attrs protocol.Attributes, models []string) protocol.Resources {
	if len(models) == 0 || total.Scalar(protocol.ResGPUs) > 0 {
		return total
	}
	total = total.Clone()
	if total.Scalars == nil {
		total.Scalars = map[string]int64{}
	}
	total.Scalars[protocol.ResGPUs] = int64(len(models)) * protocol.DeviceMilli
	for k := range models {
		total.Scalars[protocol.GPUResource(k)] = protocol.DeviceMilli
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(models)))
	if len(distinct) == 1 {
		attrs[AttrGPUModel] = protocol.Text(distinct[0])
	} else {
		attrs[AttrGPUModel] = protocol.Set(distinct...)
	}
	return total
}

// gpuEnv sets a task's GPU variables from the devices its resources name.
func gpuEnv(env map[string]string, res protocol.Resources) {
	devs := res.GPUDevices()
	if len(devs) == 0 {
		return
	}
	idx := make([]int, 0, len(devs))
	for k := range devs {
		idx = append(idx, k)
	}
	slices.Sort(idx)
	list := make([]string, len(idx))
	shares := make([]string, len(idx))
	for i, k := range idx {
		list[i] = strconv.Itoa(k)
		shares[i] = strconv.Itoa(k) + ":" + strconv.FormatInt(devs[k], 10)
	}
	joined := strings.Join(list, ",")
	env[EnvGPUs] = joined
	env["CUDA_VISIBLE_DEVICES"] = joined
	env["NVIDIA_VISIBLE_DEVICES"] = joined
	env[EnvGPUShares] = strings.Join(shares, ",")
}
