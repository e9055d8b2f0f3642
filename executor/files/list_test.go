package files

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestList_Directory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "hello\n")
	f.write("sb/stderr", "")
	f.write("sb/out/part-0", "x")
	if err := os.Chmod(filepath.Join(f.root, "sb", "stdout"), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(f.root, "sb", "stdout"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("stdout", filepath.Join(f.root, "sb", "latest")); err != nil {
		t.Fatal(err)
	}

	var got []Entry
	f.getJSON("list", url.Values{"path": {"sb"}}, &got)
	names := make([]string, len(got))
	for i, e := range got {
		names[i] = e.Name
	}
	if want := []string{"latest", "out", "stderr", "stdout"}; !slices.Equal(names, want) {
		t.Fatalf("got names %v, want %v", names, want)
	}
	latest, out, stdout := got[0], got[1], got[3]
	if !out.Dir || out.Mode[0] != 'd' {
		t.Fatalf("got %+v, want a directory", out)
	}
	if latest.Dir || latest.Mode[0] != 'L' {
		t.Fatalf("got %+v, want the symbolic link itself", latest)
	}
	if stdout.Dir || stdout.Size != 6 || stdout.Mode != "-rw-r--r--" || !stdout.MTime.Equal(mtime) {
		t.Fatalf("got %+v, want a 6-byte -rw-r--r-- file modified at %v", stdout, mtime)
	}
}

func TestList_Root(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("a/stdout", "")
	f.write("b/stdout", "")
	var got []Entry
	f.getJSON("list", url.Values{"path": {"."}}, &got)
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("got %+v, want the sandboxes a and b", got)
	}
}

func TestList_EmptyDirectoryIsAnEmptyArray(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	if err := os.Mkdir(filepath.Join(f.root, "sb"), 0o755); err != nil {
		t.Fatal(err)
	}
	resp, body := f.get("list", url.Values{"path": {"sb"}})
	if resp.StatusCode != http.StatusOK || string(body) != "[]\n" {
		t.Fatalf("got %d %q, want 200 []", resp.StatusCode, body)
	}
}

func TestList_RefusesFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write("sb/stdout", "x")
	resp, body := f.get("list", url.Values{"path": {"sb/stdout"}})
	wantError(t, resp, body, http.StatusBadRequest, CodeBadRequest)
}
