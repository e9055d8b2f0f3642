package protocol

import (
	"strings"
	"testing"
	"time"
)

func TestFrameworkFilesToken(t *testing.T) {
	const secret = "cluster-secret"
	now := time.Unix(1_700_000_000, 0)
	tok := FrameworkFilesToken(secret, "fw-a:1", now.Add(time.Hour))

	if id, ok := CheckFrameworkFilesToken(secret, tok, now); !ok || id != "fw-a:1" {
		t.Fatalf("fresh token: got %q %v, want fw-a:1", id, ok)
	}
	if _, ok := CheckFrameworkFilesToken(secret, tok, now.Add(time.Hour-time.Second)); !ok {
		t.Fatal("refused a second before its expiry")
	}
	for name, at := range map[string]time.Time{"at expiry": now.Add(time.Hour), "after expiry": now.Add(2 * time.Hour)} {
		if _, ok := CheckFrameworkFilesToken(secret, tok, at); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, ok := CheckFrameworkFilesToken("other-secret", tok, now); ok {
		t.Error("accepted under another secret")
	}
	if _, ok := CheckFrameworkFilesToken("", FrameworkFilesToken("", "fw-a:1", now.Add(time.Hour)), now); ok {
		t.Error("accepted without a secret")
	}

	if !strings.HasPrefix(tok, "fwe:1700003600:fw-a:1:") {
		t.Fatalf("token %q does not name its expiry in Unix seconds and its framework", tok)
	}
	later := FrameworkFilesToken(secret, "fw-a:1", now.Add(48*time.Hour))
	mac := tok[strings.LastIndexByte(tok, ':')+1:]
	for name, forged := range map[string]string{
		"expiry edited":          strings.Replace(tok, "1700003600", "1900000000", 1),
		"expiry with a zero":     strings.Replace(tok, "1700003600", "01700003600", 1),
		"expiry not canonical":   "fwe:01700003600:fw-a:1:" + frameworkFilesMAC(secret, "01700003600", "fw-a:1"),
		"expiry from another":    later[:strings.LastIndexByte(later, ':')+1] + mac,
		"framework edited":       strings.Replace(tok, "fw-a:1", "fw-b:1", 1),
		"mac replaced":           "fwe:1700003600:fw-a:1:" + strings.Repeat("A", len(mac)),
		"no expiry":              "fwe::fw-a:1:" + mac,
		"no framework":           "fwe:1700003600::" + mac,
		"old prefix":             "fw:" + strings.TrimPrefix(tok, "fwe:"),
		"expiry not a number":    strings.Replace(tok, "1700003600", "17000036xx", 1),
		"truncated":              tok[:len(tok)-1],
		"empty":                  "",
		"expiry only":            "fwe:1700003600",
		"expiry and mac only":    "fwe:1700003600:" + mac,
		"framework and mac only": "fwe:fw-a:" + mac,
	} {
		if id, ok := CheckFrameworkFilesToken(secret, forged, now); ok {
			t.Errorf("%s: %q accepted for %q", name, forged, id)
		}
	}
}
