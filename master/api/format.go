package api

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// FormatResources renders resources for people: CPUs in cores, memory and
// disk in MiB, ports as ranges, e.g. "cpus 1.5, mem 2048 MiB, ports
// [31000-31009]"; "" for none.
func FormatResources(r protocol.Resources) string {
	var parts []string
	for _, k := range r.Names() {
		v, scalar := r.Scalars[k]
		switch {
		case !scalar:
			parts = append(parts, fmt.Sprintf("%s %s", k, r.Ranges[k]))
		case v == 0:
		case k == protocol.ResCPUs:
			parts = append(parts, "cpus "+strconv.FormatFloat(float64(v)/1000, 'f', -1, 64))
		case k == protocol.ResMem || k == protocol.ResDisk:
			parts = append(parts, fmt.Sprintf("%s %d MiB", k, v))
		default:
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	return strings.Join(parts, ", ")
}
