package devcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
)

// documentedMetrics reads docs/metrics.md: the metric names of the table
// under each "## " heading.
func documentedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		if rest, ok := strings.CutPrefix(line, "| `allot_"); ok {
			name, _, _ := strings.Cut(rest, "`")
			out[section] = append(out[section], "allot_"+name)
		}
	}
	if len(out["Masters"]) < 20 || len(out["Agents"]) < 4 {
		t.Fatalf("docs/metrics.md lists %d master and %d agent metrics; the tables were not read", len(out["Masters"]), len(out["Agents"]))
	}
	return out
}

// scrapeNames GETs addr's /metrics and returns the metric families it
// holds (histograms by their base name).
func scrapeNames(addr string) (map[string]bool, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ = strings.Cut(name, " ")
			names[name] = true
		}
	}
	return names, nil
}

// TestMetrics_documented runs a task to its end on a dev cluster, then
// scrapes the leader and an agent and finds every metric docs/metrics.md
// lists for each.
func TestMetrics_documented(t *testing.T) {
	docs := documentedMetrics(t)
	cfg := testConfig(t, t.TempDir(), 1)
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runOneTask(t, c, "metrics", "true")
	for _, target := range []struct {
		section, addr string
	}{
		{"Masters", c.LeaderHTTPAddr()},
		{"Agents", c.Layout().Agents[0].HTTPAddr},
	} {
		testutil.WaitFor(t, wait, 50*time.Millisecond, func() error {
			names, err := scrapeNames(target.addr)
			if err != nil {
				return err
			}
			var missing []string
			for _, name := range docs[target.section] {
				// The dev cluster's masters share one NATS server of the
				// cluster's own, so they report no embedded server's
				// counts; master.TestMetrics_natsDocumented finds those.
				if !names[name] && !strings.HasPrefix(name, "allot_nats_") {
					missing = append(missing, name)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("%s at %s: documented but not served: %v", target.section, target.addr, missing)
			}
			return nil
		})
	}
}
