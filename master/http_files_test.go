package master

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestMaster_FilesToken: the operator gets a framework's files token, the
// same the framework itself is given, only with the operator token and
// only when the masters have a files secret.
func TestMaster_FilesToken(t *testing.T) {
	t.Parallel()
	m, _ := apiTestMaster(t, func(c *Config) { c.HTTPAddr, c.OperatorToken, c.FilesSecret = "127.0.0.1:0", "op", "files" })
	get := func(path, token string) (int, []byte) {
		return httpTestWithToken(t, http.MethodGet, "http://"+m.HTTPAddr()+path, token)
	}
	code, body := get("/v1/frameworks/fw-1/files-token", "op")
	var got api.FilesToken
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil {
		t.Fatalf("files token: %d %s", code, body)
	}
	// It reads for about a day (the default), and not for two.
	if id, ok := protocol.CheckFrameworkFilesToken("files", got.Token, time.Now().Add(23*time.Hour)); !ok || id != "fw-1" {
		t.Fatalf("files token %q: not valid for fw-1 in 23 hours", got.Token)
	}
	if _, ok := protocol.CheckFrameworkFilesToken("files", got.Token, time.Now().Add(26*time.Hour)); ok {
		t.Fatalf("files token %q: still valid in 26 hours", got.Token)
	}
	if code, _ := get("/v1/frameworks/fw-1/files-token", ""); code != http.StatusUnauthorized {
		t.Fatalf("without the operator token: %d, want 401", code)
	}
	if code, _ := get("/v1/frameworks/not%20an%20id/files-token", "op"); code != http.StatusBadRequest {
		t.Fatalf("a malformed id: %d, want 400", code)
	}
	plain, _ := operatorTestMaster(t, "op")
	req, _ := http.NewRequest(http.MethodGet, "http://"+plain.HTTPAddr()+"/v1/frameworks/fw-1/files-token", nil)
	req.Header.Set("Authorization", "Bearer op")
	if code, _, body := httpTestDo(t, req); code != http.StatusConflict {
		t.Fatalf("without a files secret: %d %s, want 409", code, body)
	}
}
