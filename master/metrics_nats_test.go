package master

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMetrics_natsDocumented: a master with its NATS server embedded serves
// every allot_nats_* metric docs/metrics.md lists (the dev cluster's
// masters, which TestMetrics_documented scrapes, share a NATS server of the
// cluster's own and serve none).
func TestMetrics_natsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("(?m)^\\| `(allot_nats_[a-z_]+)`").FindAllStringSubmatch(string(doc), -1)
	if len(names) < 5 {
		t.Fatalf("docs/metrics.md lists %d NATS metrics, want 5", len(names))
	}
	m, nc := apiTestMaster(t, nil)
	registerTestAgent(t, nc) // a request, so that messages have moved
	served := map[string]bool{}
	for name := range gatherSamples(t, m) {
		name, _, _ = strings.Cut(name, "{")
		served[name] = true
	}
	for _, n := range names {
		if !served[n[1]] {
			t.Errorf("%s is documented but not served", n[1])
		}
	}
}
