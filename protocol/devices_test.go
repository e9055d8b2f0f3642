package protocol

import (
	"errors"
	"testing"
)

func TestGPUIndex(t *testing.T) {
	for name, want := range map[string]int{"gpu.0": 0, "gpu.7": 7, "gpu.63": 63} {
		if k, ok := GPUIndex(name); !ok || k != want {
			t.Errorf("GPUIndex(%q) = %d, %v", name, k, ok)
		}
		if GPUResource(want) != name {
			t.Errorf("GPUResource(%d) = %q", want, GPUResource(want))
		}
	}
	for _, name := range []string{"gpu.", "gpu.64", "gpu.07", "gpu.x", "gpus", "gpu.-1", "cpu.0"} {
		if k, ok := GPUIndex(name); ok {
			t.Errorf("GPUIndex(%q) = %d, want none", name, k)
		}
	}
}

func TestResources_validateDevices(t *testing.T) {
	ok := []map[string]int64{
		{ResGPUs: 460},  // a share, no device named yet
		{ResGPUs: 2000}, // whole devices
		{ResGPUs: 1460, "gpu.0": 1000, "gpu.3": 460}, // devices named, summing to gpus
		{ResCPUs: 1000, "gpu.1": 0, ResGPUs: 0},      // a zero device
	}
	for _, s := range ok {
		if err := (Resources{Scalars: s}).Validate(); err != nil {
			t.Errorf("%v: %v", s, err)
		}
	}
	bad := []map[string]int64{
		{ResGPUs: 1000, "gpu.0": 500},  // devices hold less than gpus
		{"gpu.0": 500},                 // no gpus
		{ResGPUs: 1500, "gpu.0": 1500}, // more than one device
		{ResGPUs: 100, "gpu.99": 100},  // no such index
	}
	for _, s := range bad {
		if err := (Resources{Scalars: s}).Validate(); !errors.Is(err, ErrInvalidResources) {
			t.Errorf("%v: %v, want ErrInvalidResources", s, err)
		}
	}
}
