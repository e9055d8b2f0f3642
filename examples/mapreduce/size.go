package main

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes parseSize accepts, longest first; KB, MB and
// GB are binary (1024-based), as are KiB, MiB and GiB.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	{"B", 1},
}

// parseSize reads a byte count such as "4096", "500KB" or "2MB".
func parseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if len(num) > len(u.suffix) && strings.EqualFold(num[len(num)-len(u.suffix):], u.suffix) {
			num, mult = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<40 {
		return 0, fmt.Errorf("size %q: want a byte count such as 4096, 500KB or 2MB", s)
	}
	return int64(f * float64(mult)), nil
}

// formatSize renders a byte count briefly: "512B", "500KB", "2.0MB".
func formatSize(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1<<20:
		return fmt.Sprintf("%.0fKB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1fMB", float64(n)/(1<<20))
	}
}
