package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// chromium is the Chromium the browser tests drive, or a skip saying how to
// get one; with ALLOT_REQUIRE_BROWSER set (CI, whose .ci/run installs
// Debian's), a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on this machine (apt-get install chromium): the web UI's browser tests need one"
	if os.Getenv("ALLOT_REQUIRE_BROWSER") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium that accepts every confirmation and
// answers the operator token's prompt with token.
func browser(t *testing.T, token string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: token})
			}()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// TestUI_Browser drives the web UI in a real headless Chromium: the
// overview shows the cluster's real state and its links lead to the agent,
// framework, task and role pages; a Kill clicked on the task page kills the
// task and a Drain clicked on the agent page drains the agent, the page
// asking for the operator token on the way. With ALLOT_UI_SCREENSHOTS set
// to a directory, it saves a screenshot of each page there (make
// ui-screenshots).
func TestUI_Browser(t *testing.T) {
	const token = "op-token"
	ctx := browser(t, token)
	c := testcluster.New(t, testcluster.Options{Masters: 1,
		Configure: func(_ int, cfg *master.Config) { cfg.OperatorToken = token }})
	ag := c.NewAgent(testcluster.AgentOptions{Resources: agentResources(4), Held: true})
	fw := c.NewFramework(testcluster.FrameworkOptions{Name: "web-shop", Role: "eng/web",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: 2}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Max: 2}})
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := len(ag.Tasks()); n != 2 {
			return fmt.Errorf("%d tasks on the agent, want 2", n)
		}
		return nil
	})
	task := ag.Tasks()[0].Info.TaskID
	base := "http://" + c.HTTPAddrs()[0]
	shots := os.Getenv("ALLOT_UI_SCREENSHOTS")
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		browse(t, ctx, what, steps...)
	}
	visit := func(name string, steps ...chromedp.Action[chromedp.Void]) string {
		t.Helper()
		do(name, append(steps, chromedp.WaitVisible(chromedp.CSS("h1")))...)
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if shots != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
			if err != nil {
				t.Fatalf("screenshot of %s: %v", name, err)
			}
			if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return text
	}
	wantText := func(page, text string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("the %s page lacks %q", page, w)
			}
		}
	}

	text := visit("overview", chromedp.Navigate(base+"/ui/"))
	wantText("overview", text, string(ag.ID()), "web-shop", "eng/web", string(task))
	text = visit("agent", chromedp.Click(chromedp.CSS(`a[href="/ui/agents/`+string(ag.ID())+`"]`)))
	wantText("agent", text, "Agent "+string(ag.ID()), ag.Hostname(), string(task))
	text = visit("framework", chromedp.Navigate(base+"/ui/"),
		chromedp.Click(chromedp.CSS(`a[href="/ui/frameworks/`+string(fw.ID())+`"]`)))
	wantText("framework", text, "Framework "+string(fw.ID()), "web-shop", "Why it is, or is not, offered resources")
	text = visit("role", chromedp.Click(chromedp.CSS(`a[href="/ui/roles/eng/web"]`)))
	wantText("role", text, "Role eng/web", "web-shop")
	taskPage := base + "/ui/frameworks/" + string(fw.ID()) + "/tasks/" + string(task)
	// The test cluster's agents run no file server: the output and
	// sandbox pages say so (internal/devcluster's
	// TestUILog_readsTheAgentsSandbox reads real ones).
	text = visit("stdout", chromedp.Navigate(taskPage+"/stdout"))
	wantText("stdout", text, "stdout of task "+string(task), "file server of agent")
	text = visit("sandbox", chromedp.Navigate(taskPage+"/sandbox"))
	wantText("sandbox", text, "Sandbox of task "+string(task), "file server of agent")
	text = visit("task", chromedp.Navigate(taskPage))
	wantText("task", text, "Task "+string(task), "allot tasks logs", "stdout", "sandbox")

	// Kill, from the task page: the framework hears its task was killed.
	do("kill", chromedp.Click(chromedp.CSS(`button[data-action="kill"]`)))
	// The page reloads once the kill is sent; a killed task has no button.
	do("the reload after the kill", chromedp.WaitNotPresent(chromedp.CSS(`button[data-action="kill"]`)))
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if ft, ok := fw.Task(task); ok {
			if last, ok := ft.Last(); ok && last.State == protocol.TaskKilled {
				return nil
			}
		}
		return fmt.Errorf("task %s not killed yet", task)
	})
	// Drain, from the agent page: the agent drains.
	do("drain", chromedp.Navigate(base+"/ui/agents/"+string(ag.ID())),
		chromedp.WaitVisible(chromedp.CSS(`button[data-action="drain"]`)),
		chromedp.Click(chromedp.CSS(`button[data-action="drain"]`)))
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		st, err := stateOf(base)
		if err != nil {
			return err
		}
		for _, a := range st.Agents {
			if a.ID == ag.ID() && a.State == "draining" {
				return nil
			}
		}
		return fmt.Errorf("agent %s not draining: %+v", ag.ID(), st.Agents)
	})
}

// stateOf reads GET /v1/state of the master at base (no credentials: the
// test cluster has none, so every reader is the operator).
func stateOf(base string) (api.State, error) {
	var st api.State
	resp, err := http.Get(base + "/v1/state")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// browse runs steps, again if a navigation was cut short or stalled: the
// pages reload themselves every few seconds and after an action, and a
// navigation a reload overtakes may never finish. Each try has its own
// time limit (a context derived from one that has run, as chromedp asks).
func browse(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for try := 0; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := chromedp.Do(tctx, steps...)
		cancel()
		if err == nil {
			return
		}
		retry := strings.Contains(err.Error(), "ERR_ABORTED") || errors.Is(err, context.DeadlineExceeded)
		if try == 3 || !retry {
			t.Fatalf("%s: %v", what, err)
		}
	}
}
