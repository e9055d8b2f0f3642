package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// loadConfigFile fills settings (a pointer to a struct whose fields the
// command's flags are bound to) from a JSON file, then sets again every
// flag given on the command line, so flags win over the file.
func loadConfigFile(path string, settings any, cmd *cobra.Command) error {
	given := map[string]string{}
	cmd.Flags().Visit(func(f *pflag.Flag) { given[f.Name] = f.Value.String() })
	if err := decodeJSONFile(path, settings); err != nil {
		return fmt.Errorf("config file %w", err)
	}
	for name, value := range given {
		if err := cmd.Flags().Set(name, value); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	return nil
}
