package executor

import (
	"errors"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestParseDevices(t *testing.T) {
	for in, want := range map[string][]string{
		"":           nil,
		"none":       nil,
		"T4":         {"T4"},
		"T4x2,A10":   {"T4", "T4", "A10"},
		"V100M16x1":  {"V100M16"},
		" G2x3 , A ": {"G2", "G2", "G2", "A"},
	} {
		got, err := ParseDevices(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseDevices(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"T4x0", "T4x-1", ",", "T4x65"} {
		if _, err := ParseDevices(in); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseDevices(%q): %v, want ErrConfig", in, err)
		}
	}
}

func TestParseGPUList(t *testing.T) {
	out := "0, Tesla T4\n1, Tesla T4\nbad line\n3, NVIDIA A10\n"
	if got := parseGPUList(out); !slices.Equal(got, []string{"Tesla-T4", "Tesla-T4"}) {
		t.Fatalf("parseGPUList = %v (a gap at index 2 ends the list)", got)
	}
}

func TestWithGPUs(t *testing.T) {
	attrs := protocol.Attributes{}
	total := withGPUs(protocol.Scalars(map[string]int64{protocol.ResCPUs: 4000}), attrs, []string{"T4", "A10"})
	if err := total.Validate(); err != nil {
		t.Fatal(err)
	}
	if total.Scalar(protocol.ResGPUs) != 2000 || total.Scalar("gpu.0") != 1000 || total.Scalar("gpu.1") != 1000 {
		t.Fatalf("total %s", total)
	}
	if m := attrs[AttrGPUModel]; m.Kind != protocol.KindSet || !slices.Equal(m.Set, []string{"A10", "T4"}) {
		t.Fatalf("gpu_model %+v", m)
	}
	// Resources that already name GPUs are kept as given.
	given := protocol.Scalars(map[string]int64{protocol.ResGPUs: 1000, "gpu.0": 1000})
	if got := withGPUs(given, protocol.Attributes{}, []string{"T4", "T4"}); got.Scalar(protocol.ResGPUs) != 1000 {
		t.Fatalf("given GPUs replaced: %s", got)
	}
}

func TestGPUEnv(t *testing.T) {
	env := map[string]string{}
	gpuEnv(env, protocol.Scalars(map[string]int64{protocol.ResGPUs: 1500, "gpu.3": 1000, "gpu.1": 500}))
	if env["CUDA_VISIBLE_DEVICES"] != "1,3" || env[EnvGPUs] != "1,3" || env[EnvGPUShares] != "1:500,3:1000" {
		t.Fatalf("env %v", env)
	}
	none := map[string]string{}
	gpuEnv(none, protocol.Scalars(map[string]int64{protocol.ResGPUs: 500}))
	if len(none) != 0 {
		t.Fatalf("a task naming no device got %v", none)
	}
}
