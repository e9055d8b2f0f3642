package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLongFunctions: a function or literal over the limit is listed with
// its place and length; one at the limit, and files under testdata/, are
// not.
func TestLongFunctions(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	src := "package p\n\n" + body("atLimit", 10) + body("over", 11) +
		"var f = func() {\n" + strings.Repeat("\t_ = 0\n", 10) + "}\n"
	write := func(path, data string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "p.go"), src)
	write(filepath.Join(dir, "testdata", "q.go"), "package q\n\n"+body("ignored", 50))
	got, err := longFunctions(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "p.go") + ":13 over: 11 lines", filepath.Join(dir, "p.go") + ":24 func literal: 12 lines"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
