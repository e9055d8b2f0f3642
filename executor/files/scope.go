package files

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// FrameworkToken returns a token, valid until expires, that lets a
// framework's tasks read that framework's sandboxes, "<framework ID>_<task
// ID>" and their shortened forms, on every agent that shares secret
// (Config.Secret); see protocol.FrameworkFilesToken.
func FrameworkToken(secret, frameworkID string, expires time.Time) string {
	return protocol.FrameworkFilesToken(secret, protocol.FrameworkID(frameworkID), expires)
}

// frameworkOf checks a framework token against secret and returns the
// framework it names, while the token has not expired.
func frameworkOf(secret, token string) (string, bool) {
	id, ok := protocol.CheckFrameworkFilesToken(secret, token, time.Now())
	return string(id), ok
}

// inScope reports whether the clean relative name lies in one of the
// framework's sandboxes: its first element is "<framework>_...".
func inScope(framework, name string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(name), "/")
	return strings.HasPrefix(first, framework+"_")
}

// tokenFrameworkKey keys the framework of the request's token in its
// context.
type tokenFrameworkKey struct{}

// withTokenFramework records the framework a framework token admitted r
// for, so endpoints can tell whose sandbox they serve without guessing it
// from the path.
func withTokenFramework(r *http.Request, framework string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), tokenFrameworkKey{}, framework))
}

// tokenFramework returns the framework recorded by withTokenFramework, ""
// for a request with the agent's own token.
func tokenFramework(r *http.Request) string {
	fw, _ := r.Context().Value(tokenFrameworkKey{}).(string)
	return fw
}
