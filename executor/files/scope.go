package files

import (
	"path/filepath"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// FrameworkToken returns the token that lets a framework's tasks read that
// framework's sandboxes, "<framework ID>_<task ID>" and their shortened
// forms, on every agent that shares secret (Config.Secret); see
// protocol.FrameworkFilesToken.
func FrameworkToken(secret, frameworkID string) string {
	return protocol.FrameworkFilesToken(secret, protocol.FrameworkID(frameworkID))
}

// frameworkOf checks a framework token against secret and returns the
// framework it names.
func frameworkOf(secret, token string) (string, bool) {
	id, ok := protocol.CheckFrameworkFilesToken(secret, token)
	return string(id), ok
}

// inScope reports whether the clean relative name lies in one of the
// framework's sandboxes: its first element is "<framework>_...".
func inScope(framework, name string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(name), "/")
	return strings.HasPrefix(first, framework+"_")
}
