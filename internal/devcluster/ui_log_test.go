package devcluster

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUILog_readsTheAgentsSandbox: the web UI shows a task's stdout and
// stderr, escaped, which the leader reads from the task's agent with the
// framework's files token; without the operator token or the framework's
// principal, the page is refused, and no other file is served.
func TestUILog_readsTheAgentsSandbox(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), 1)
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fw := runOneTask(t, c, "ui-log", "echo '<b>out-of-the-sandbox</b>'; echo err-of-the-sandbox >&2").FrameworkID
	get := func(path, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+c.LeaderHTTPAddr()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	token := c.Layout().Credentials.OperatorToken
	base := "/ui/frameworks/" + string(fw) + "/tasks/t1/"
	// The output is text: markup in it is escaped, not run.
	for file, want := range map[string]string{"stdout": "&lt;b&gt;out-of-the-sandbox&lt;/b&gt;", "stderr": "err-of-the-sandbox"} {
		code, page := get(base+file, token)
		if code != http.StatusOK || !strings.Contains(page, "<pre>"+want+"\n</pre>") {
			t.Errorf("GET %s%s: %d\n%s", base, file, code, page)
		}
	}
	// The sandbox lists its files, each a link to its last lines.
	code, page := get(base+"sandbox", token)
	for _, want := range []string{base + "file?path=stdout", base + "file?path=stderr"} {
		if code != http.StatusOK || !strings.Contains(page, `href="`+want+`"`) {
			t.Errorf("the sandbox page (%d) lacks a link to %s", code, want)
		}
	}
	if code, page := get(base+"file?path=stdout", token); code != http.StatusOK || !strings.Contains(page, "&lt;b&gt;out-of-the-sandbox") {
		t.Errorf("a file of the sandbox: %d\n%s", code, page)
	}
	// Nothing outside the sandbox: a path that climbs out is refused.
	for _, path := range []string{"file?path=../../etc/passwd", "sandbox?path=..", "file?path=", "stdout?path=x"} {
		if code, _ := get(base+path, token); code != http.StatusNotFound {
			t.Errorf("GET %s%s: %d, want 404", base, path, code)
		}
	}
	if code, _ := get(base+"stdout", ""); code != http.StatusUnauthorized {
		t.Errorf("the output without credentials: %d, want 401", code)
	}
	if code, _ := get(base+"environ", token); code != http.StatusNotFound {
		t.Errorf("a file other than stdout and stderr: %d, want 404", code)
	}
}
