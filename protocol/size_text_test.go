package protocol

import "testing"

func TestParseMiB(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"128M": 128, "2G": 2048, "300": 300} {
		if got, err := ParseMiB(in); err != nil || got != want {
			t.Errorf("ParseMiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1M", "1.5G", "12K", "G", "2000000000G"} {
		if got, err := ParseMiB(in); err == nil {
			t.Errorf("ParseMiB(%q) = %d, want an error", in, got)
		}
	}
}
