package table

import (
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	t.Parallel()
	for x, want := range map[float64]string{2: "2", 2.1: "2.1", 0.123456: "0.1235", 1e6: "1000000", -0.5: "-0.5"} {
		if got := Num(x); got != want {
			t.Errorf("Num(%v) = %q, want %q", x, got, want)
		}
	}
}

func TestNew_rightAligned(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	tw := New(&b)
	tw.Write([]byte("a\tbbb\t\nccc\td\t\n"))
	tw.Flush()
	if want := "    a  bbb\n  ccc    d\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
