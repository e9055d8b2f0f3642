package files

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"path/filepath"
	"strings"
)

// frameworkTokenPrefix starts every framework token, so the handler can
// tell one from the agent's own token without trying both.
const frameworkTokenPrefix = "fw:"

// FrameworkToken returns the token that lets a framework's tasks read that
// framework's sandboxes, "<framework ID>_<task ID>" and their shortened
// forms, on every agent that shares secret (Config.Secret): the MapReduce
// shuffle reads mappers' outputs on other agents with it. Agents give it to
// each task in its environment. The token names the framework and carries
// an HMAC-SHA256 of its ID under secret, so an agent checks it without
// keeping a list, and a task of one framework cannot forge another's.
func FrameworkToken(secret, frameworkID string) string {
	return frameworkTokenPrefix + frameworkID + ":" + frameworkMAC(secret, frameworkID)
}

func frameworkMAC(secret, frameworkID string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("allot-files-framework\x00"))
	m.Write([]byte(frameworkID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// frameworkOf checks a framework token against secret and returns the
// framework it names.
func frameworkOf(secret, token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, frameworkTokenPrefix)
	if !ok || secret == "" {
		return "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", false
	}
	fw, mac := rest[:i], rest[i+1:]
	if !hmac.Equal([]byte(mac), []byte(frameworkMAC(secret, fw))) {
		return "", false
	}
	return fw, true
}

// inScope reports whether the clean relative name lies in one of the
// framework's sandboxes: its first element is "<framework>_...".
func inScope(framework, name string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(name), "/")
	return strings.HasPrefix(first, framework+"_")
}
