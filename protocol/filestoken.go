package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// frameworkFilesTokenPrefix starts every framework files token,
//
//	fwe:<expiry>:<framework ID>:<mac>     valid until expiry, in Unix seconds
//
// so that a file server tells one from its agent's own token.
const frameworkFilesTokenPrefix = "fwe:"

// FrameworkFilesToken returns the token that lets a framework, and its
// tasks, read that framework's sandboxes on every agent whose files secret
// is secret, until expires (to the second, rounded down). It names the
// framework and its expiry and carries an HMAC-SHA256 of both under
// secret, so a file server checks it without keeping a list, a framework
// cannot forge another's, and a leaked token reads for a bounded time only.
// Masters give one to each framework (SubscribeReply, HeartbeatEvent),
// agents to each task (ALLOT_FILES_TOKEN).
func FrameworkFilesToken(secret string, id FrameworkID, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return frameworkFilesTokenPrefix + exp + ":" + string(id) + ":" + frameworkFilesMAC(secret, exp, string(id))
}

// CheckFrameworkFilesToken verifies a framework files token against secret
// at time now and returns the framework it is for. A token whose expiry is
// not after now, or whose expiry or framework was altered, is refused.
func CheckFrameworkFilesToken(secret, token string, now time.Time) (FrameworkID, bool) {
	rest, ok := strings.CutPrefix(token, frameworkFilesTokenPrefix)
	if !ok || secret == "" {
		return "", false
	}
	exp, rest, ok := strings.Cut(rest, ":")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", false
	}
	id, mac := rest[:i], rest[i+1:]
	if !hmac.Equal([]byte(mac), []byte(frameworkFilesMAC(secret, exp, id))) {
		return "", false
	}
	// The MAC covers the expiry as written; only its canonical decimal
	// form is accepted, so that one token has one spelling.
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || strconv.FormatInt(unix, 10) != exp || now.Unix() >= unix {
		return "", false
	}
	return FrameworkID(id), true
}

func frameworkFilesMAC(secret, exp, id string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("allot-files-framework-until\x00"))
	m.Write([]byte(exp))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
