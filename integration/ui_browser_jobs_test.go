package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master"
)

// TestUI_BrowserJobs drives the jobs pages in a real headless Chromium: a
// job file typed into the jobs page is checked (the plan shown, nothing
// submitted), then submitted (the job's spec in the store); on the job's
// page Stop stops it and Revert makes an earlier version's file the next
// version; the page asks for the operator token on the way.
func TestUI_BrowserJobs(t *testing.T) {
	const token = "op-token"
	ctx := browser(t, token)
	c := testcluster.New(t, testcluster.Options{Masters: 1,
		Configure: func(_ int, cfg *master.Config) { cfg.OperatorToken = token }})
	c.NewAgent(testcluster.AgentOptions{Resources: agentResources(4)})
	base := "http://" + c.HTTPAddrs()[0]
	spec := func() (jobs.SpecRecord, bool) {
		var rec jobs.SpecRecord
		e, ok := c.WaitForLeader().View().StoreGet("", jobs.SpecKey("web"))
		return rec, ok && json.Unmarshal(e.Value, &rec) == nil
	}
	planText := func() string {
		var text string
		testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			out, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#job-plan")))
			if err != nil || out == "" {
				return fmt.Errorf("no plan shown yet (%v)", err)
			}
			text = out
			return nil
		})
		return text
	}
	file := "job \"web\" {\n  group \"g\" {\n    count = 2\n    task \"t\" {\n      command = \"sleep\"\n      args = [\"300\"]\n" +
		"      resources {\n        cpus = 0.1\n      }\n    }\n  }\n}\n"

	browse(t, ctx, "the jobs page", chromedp.Navigate(base+"/ui/jobs"), chromedp.WaitVisible(chromedp.CSS("#job-source")),
		chromedp.SetValue(chromedp.CSS("#job-source"), file), chromedp.Click(chromedp.CSS(`button[data-action="check-job"]`)))
	if got := planText(); !strings.Contains(got, "job web: would be version 1 (nothing submitted)") || !strings.Contains(got, "group g: 2 started") {
		t.Fatalf("the check shows %q", got)
	}
	if _, ok := spec(); ok {
		t.Fatal("a check submitted the job")
	}
	// The click empties the plan shown before it sends the file.
	browse(t, ctx, "submit", chromedp.SetValue(chromedp.CSS("#job-source"), strings.Replace(file, "count = 2", "count = 3", 1)),
		chromedp.Click(chromedp.CSS(`button[data-action="submit-job"]`)))
	if got := planText(); !strings.Contains(got, "job web: version 1 submitted") {
		t.Fatalf("the submission shows %q", got)
	}
	if rec, ok := spec(); !ok || rec.Version != 1 {
		t.Fatalf("after the submission the spec is %+v (%v)", rec, ok)
	}

	// The job's page: Stop, then Revert to version 1.
	browse(t, ctx, "stop", chromedp.Navigate(base+"/ui/jobs/anonymous/web"),
		chromedp.WaitVisible(chromedp.CSS(`button[data-action="stop-job"]`)),
		chromedp.Click(chromedp.CSS(`button[data-action="stop-job"]`)))
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if rec, _ := spec(); !rec.Stopped {
			return fmt.Errorf("job not stopped: %+v", rec)
		}
		return nil
	})
	browse(t, ctx, "revert", chromedp.Navigate(base+"/ui/jobs/anonymous/web"),
		chromedp.WaitVisible(chromedp.CSS(`button[data-action="revert-job"]`)),
		chromedp.Click(chromedp.CSS(`button[data-action="revert-job"]`)))
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if rec, _ := spec(); rec.Version != 2 || rec.Stopped {
			return fmt.Errorf("job not reverted: %+v", rec)
		}
		return nil
	})
}
