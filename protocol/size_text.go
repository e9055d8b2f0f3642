package protocol

import (
	"errors"
	"strconv"
	"strings"
)

// ParseMiB reads a size in MiB as people write it: 128M, 2G, or a plain
// number of MiB.
func ParseMiB(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "G"):
		s, mult = strings.TrimSuffix(s, "G"), 1024
	case strings.HasSuffix(s, "M"):
		s = strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, errors.New("want a positive size: 128M, 2G, or MiB")
	}
	return n * mult, nil
}
