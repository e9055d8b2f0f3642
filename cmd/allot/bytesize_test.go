package main

import (
	"encoding/json"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "4096B": 4096, "10GB": 10 << 30, "10gb": 10 << 30, "10G": 10 << 30, "10GiB": 10 << 30,
		"512MB": 512 << 20, "512 MB": 512 << 20, "1.5G": 3 << 29, "2T": 2 << 40, "64K": 64 << 10, "64KiB": 64 << 10,
	} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "-1", "-1GB", "ten", "1PB", "1e30", "NaN", "9223372036854775807K"} {
		if got, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", in, got)
		}
	}
}

// A flag's value is set again from its String by loadConfigFile: it must
// read back the same.
func TestByteSize_RoundTrip(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{0, 1, 1000, 1024, 10 << 30, 3 << 29, 1<<40 + 1} {
		b := byteSize(n)
		var back byteSize
		if err := back.Set(b.String()); err != nil || back != b {
			t.Errorf("%d renders %q, which reads back %d, %v", n, b.String(), back, err)
		}
	}
	var j struct {
		A byteSize `json:"a"`
		B byteSize `json:"b"`
	}
	if err := json.Unmarshal([]byte(`{"a": "2GB", "b": 1048576}`), &j); err != nil || j.A != 2<<30 || j.B != 1<<20 {
		t.Errorf("JSON: %+v, %v; want 2GB and 1 MiB", j, err)
	}
	if err := json.Unmarshal([]byte(`{"a": "lots"}`), &j); err == nil {
		t.Error("JSON size \"lots\": got nil error")
	}
}
