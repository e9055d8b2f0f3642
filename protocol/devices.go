package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// Devices. An agent with GPUs declares each device as a scalar of its own,
// "gpu.<index>" = 1000 (milli of that device), besides the total "gpus".
// A task asks for "gpus" alone (a share of one device, or whole devices);
// the offer names the devices it holds room on, and the launched task
// names the ones it uses, so the agent knows which devices to give it and
// a restarted agent or a new leader knows which are taken.

// DeviceMilli is one whole device.
const DeviceMilli = 1000

// MaxDevices bounds the device index of an agent.
const MaxDevices = 64

// GPUResource is the scalar name of GPU device index on its agent.
func GPUResource(index int) string { return "gpu." + strconv.Itoa(index) }

// GPUIndex reports whether name is a GPU device's scalar, and its index.
func GPUIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "gpu.")
	if !ok || rest == "" || len(rest) > 2 || rest[0] == '0' && len(rest) > 1 {
		return 0, false
	}
	k, err := strconv.Atoi(rest)
	if err != nil || k < 0 || k >= MaxDevices {
		return 0, false
	}
	return k, true
}

// GPUDevices lists the GPU devices r names, with their milli, by index.
func (r Resources) GPUDevices() map[int]int64 {
	var out map[int]int64
	for name, x := range r.Scalars {
		if k, ok := GPUIndex(name); ok && x > 0 {
			if out == nil {
				out = map[int]int64{}
			}
			out[k] = x
		}
	}
	return out
}

// validateDevices checks that the devices r names hold at most one device
// each and add up to its gpus.
func (r Resources) validateDevices() error {
	var sum int64
	named := false
	for name, x := range r.Scalars {
		if strings.HasPrefix(name, "gpu.") {
			if _, ok := GPUIndex(name); !ok {
				return fmt.Errorf("%w: %q is no GPU device (gpu.0 to gpu.%d)", ErrInvalidResources, name, MaxDevices-1)
			}
			if x > DeviceMilli {
				return fmt.Errorf("%w: %s is %d, more than one device (%d)", ErrInvalidResources, name, x, DeviceMilli)
			}
			sum += x
			named = true
		}
	}
	if named && sum != r.Scalars[ResGPUs] {
		return fmt.Errorf("%w: the devices named hold %d milli-GPUs, gpus says %d", ErrInvalidResources, sum, r.Scalars[ResGPUs])
	}
	return nil
}
