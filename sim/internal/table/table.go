package table

import (
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// New returns a writer of right-aligned columns two spaces apart; cells
// end with a tab and the caller flushes it.
func New(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// Num formats a number to at most four decimals, without trailing zeros.
func Num(x float64) string { return strconv.FormatFloat(math.Round(x*1e4)/1e4, 'f', -1, 64) }
