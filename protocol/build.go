package protocol

import "runtime/debug"

// BuildVersion is the version the running binary was built as: its
// module's version, else "devel" and the source revision it was built
// from, else "(devel)". Masters and agents label allot_build_info with it
// and the CLI prints it.
func BuildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel " + s.Value[:12]
		}
	}
	return "(devel)"
}
