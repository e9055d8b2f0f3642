package master

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRoutes_documented: every endpoint of the API says what it does,
// is routed once, and every /v1 path is in the operators' guide or the
// jobs guide, so a new endpoint cannot go unmentioned.
func TestRoutes_documented(t *testing.T) {
	var docs strings.Builder
	for _, f := range []string{"../docs/operations.md", "../docs/jobs.md"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(data)
	}
	// Path parameters are written {id} here and {id}, NAME or PRINCIPAL
	// in the guides: compare the literal parts.
	param := regexp.MustCompile(`\{[^}]+\}`)
	m := &Master{metrics: newMetrics(func() bool { return false })}
	seen := map[string]bool{}
	for _, r := range m.routes() {
		if r.about == "" || r.handler == nil {
			t.Errorf("%s: no description or no handler", r.pattern)
		}
		if seen[r.pattern] {
			t.Errorf("%s routed twice", r.pattern)
		}
		seen[r.pattern] = true
		_, path, _ := strings.Cut(r.pattern, " ")
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for _, part := range param.Split(path, -1) {
			part = strings.Trim(part, "/")
			if part != "" && !strings.Contains(docs.String(), part) {
				t.Errorf("%s: %q is in neither docs/operations.md nor docs/jobs.md", r.pattern, part)
			}
		}
	}
}
