package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// frameworkFilesTokenPrefix starts every framework files token, so a file
// server can tell one from its agent's own token.
const frameworkFilesTokenPrefix = "fw:"

// FrameworkFilesToken returns the token that lets a framework, and its
// tasks, read that framework's sandboxes on every agent whose files secret
// is secret. Agents give it to each task (ALLOT_FILES_TOKEN); a master
// configured with the same secret gives it to the framework in its
// SubscribeReply. It names the framework and carries an HMAC-SHA256 of the
// ID under secret, so a file server checks it without keeping a list and a
// framework cannot forge another's.
func FrameworkFilesToken(secret string, id FrameworkID) string {
	return frameworkFilesTokenPrefix + string(id) + ":" + frameworkFilesMAC(secret, string(id))
}

// CheckFrameworkFilesToken verifies a framework files token against secret
// and returns the framework it is for.
func CheckFrameworkFilesToken(secret, token string) (FrameworkID, bool) {
	rest, ok := strings.CutPrefix(token, frameworkFilesTokenPrefix)
	if !ok || secret == "" {
		return "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", false
	}
	id, mac := rest[:i], rest[i+1:]
	if !hmac.Equal([]byte(mac), []byte(frameworkFilesMAC(secret, id))) {
		return "", false
	}
	return FrameworkID(id), true
}

func frameworkFilesMAC(secret, id string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("allot-files-framework\x00"))
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
