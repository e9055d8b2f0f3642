package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func simCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Replay workloads against the scheduling code the master runs",
	}
	cmd.AddCommand(simHDRFCommand())
	cmd.AddCommand(simCarbyneCommand())
	cmd.AddCommand(simCoflowCommand())
	cmd.AddCommand(simPhoenixCommand())
	cmd.AddCommand(simPackCommand())
	return cmd
}

// seedRange is n seeds from first on, for --seed and --seeds.
func seedRange(first uint64, n int) []uint64 {
	var seeds []uint64
	for i := range n {
		seeds = append(seeds, first+uint64(i))
	}
	return seeds
}

// parseSweep splits KNOB=V1,V2,... ("" for no sweep).
func parseSweep(s string) (string, []float64, error) {
	if s == "" {
		return "", nil, nil
	}
	knob, list, ok := strings.Cut(s, "=")
	if !ok || list == "" {
		return "", nil, fmt.Errorf("--sweep %q: want KNOB=V1,V2 and so on", s)
	}
	var values []float64
	for _, v := range strings.Split(list, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return "", nil, fmt.Errorf("--sweep %q: %q is not a number", s, v)
		}
		values = append(values, x)
	}
	return knob, values, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
