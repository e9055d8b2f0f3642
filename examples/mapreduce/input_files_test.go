package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// inputTree is a job input laid out as the tests below need it:
//
//	in/a.txt
//	in/b/c.txt
//	in/.hidden, in/_SUCCESS, in/_temporary/x.txt  (skipped)
//	in/d -> outside/file.txt                       (a link to a file)
//	in/e -> outside/dir                            (a link to a directory)
//	outside/file.txt
//	outside/dir/f.txt
type inputTree struct {
	root, in, outside string
	// content is each file's content by its path under root.
	content map[string]string
}

func newInputTree(t *testing.T) inputTree {
	t.Helper()
	root := t.TempDir()
	tr := inputTree{root: root, in: filepath.Join(root, "in"), outside: filepath.Join(root, "outside"), content: map[string]string{
		"in/a.txt":              "alpha beta\ngamma\n",
		"in/b/c.txt":            "in a subdirectory\n",
		"in/.hidden":            "hidden\n",
		"in/_SUCCESS":           "",
		"in/_temporary/x.txt":   "an attempt's leftovers\n",
		"outside/file.txt":      "linked file\nwithout a final newline",
		"outside/dir/f.txt":     "in a linked directory\n",
		"outside/dir/.skip.txt": "hidden in a linked directory\n",
	}}
	for name, data := range tr.content {
		writeFile(t, filepath.Join(root, name), data)
	}
	symlink(t, filepath.Join(tr.outside, "file.txt"), filepath.Join(tr.in, "d"))
	// A relative link, as people make them.
	symlink(t, filepath.Join("..", "outside", "dir"), filepath.Join(tr.in, "e"))
	return tr
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// relFiles renders listFiles' answer as paths under root with sizes.
func relFiles(t *testing.T, root string, files []inputFile) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		rel, err := filepath.Rel(root, f.path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel)+":"+strconv.FormatInt(f.size, 10))
	}
	return out
}

func TestListFiles(t *testing.T) {
	t.Parallel()
	tr := newInputTree(t)
	size := func(name string) string { return name + ":" + strconv.Itoa(len(tr.content[name])) }
	// A link is listed under its own path, with its target's size.
	inFiles := []string{size("in/a.txt"), size("in/b/c.txt"),
		"in/d:" + strconv.Itoa(len(tr.content["outside/file.txt"])),
		"in/e/f.txt:" + strconv.Itoa(len(tr.content["outside/dir/f.txt"]))}
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{name: "directory", paths: []string{"in"}, want: inFiles},
		{name: "file then directory", paths: []string{"outside/file.txt", "in"},
			want: append([]string{size("outside/file.txt")}, inFiles...)},
		{name: "directory then file", paths: []string{"in", "outside/file.txt"},
			want: append(slices.Clone(inFiles), size("outside/file.txt"))},
		{name: "subdirectory", paths: []string{"in/b"}, want: []string{size("in/b/c.txt")}},
		{name: "link to a directory", paths: []string{"in/e"}, want: []string{"in/e/f.txt:" + strconv.Itoa(len(tr.content["outside/dir/f.txt"]))}},
		// Only names inside directories are skipped: a file named
		// outright is the user's choice.
		{name: "hidden file named outright", paths: []string{"in/.hidden"}, want: []string{size("in/.hidden")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var paths []string
			for _, p := range tc.paths {
				paths = append(paths, filepath.Join(tr.root, p))
			}
			files, err := listFiles(paths)
			if err != nil {
				t.Fatal(err)
			}
			if got := relFiles(t, tr.root, files); !slices.Equal(got, tc.want) {
				t.Errorf("listFiles(%q) = %q, want %q", tc.paths, got, tc.want)
			}
		})
	}
}

func TestListFiles_Refused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	// Each case's directory holds a good file besides the bad entry, so
	// that the error is for the entry and not for an empty input.
	broken := filepath.Join(root, "broken")
	writeFile(t, filepath.Join(broken, "ok.txt"), "ok\n")
	symlink(t, filepath.Join(root, "missing"), filepath.Join(broken, "zz"))

	loop := filepath.Join(root, "loop")
	writeFile(t, filepath.Join(loop, "ok.txt"), "ok\n")
	symlink(t, loop, filepath.Join(loop, "link"))

	deepLoop := filepath.Join(root, "deep")
	writeFile(t, filepath.Join(deepLoop, "ok.txt"), "ok\n")
	symlink(t, filepath.Join("..", ".."), filepath.Join(deepLoop, "sub", "sub2", "up"))

	linkLoop := filepath.Join(root, "linkloop")
	writeFile(t, filepath.Join(linkLoop, "ok.txt"), "ok\n")
	symlink(t, "b", filepath.Join(linkLoop, "a"))
	symlink(t, "a", filepath.Join(linkLoop, "b"))

	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	onlyHidden := filepath.Join(root, "onlyhidden")
	writeFile(t, filepath.Join(onlyHidden, "_SUCCESS"), "")
	writeFile(t, filepath.Join(onlyHidden, ".x"), "x\n")

	tests := []struct {
		name  string
		paths []string
		// mention is what the error must name.
		mention string
	}{
		{name: "broken link in a directory", paths: []string{broken}, mention: filepath.Join(broken, "zz")},
		{name: "broken link named outright", paths: []string{filepath.Join(broken, "zz")}, mention: filepath.Join(broken, "zz")},
		{name: "link to its own directory", paths: []string{loop}, mention: filepath.Join(loop, "link")},
		{name: "link to an ancestor", paths: []string{deepLoop}, mention: filepath.Join(deepLoop, "sub", "sub2", "up")},
		{name: "links to each other", paths: []string{linkLoop}, mention: filepath.Join(linkLoop, "a")},
		{name: "missing path", paths: []string{filepath.Join(root, "nothing")}, mention: filepath.Join(root, "nothing")},
		{name: "empty directory", paths: []string{empty}, mention: empty},
		{name: "only skipped names", paths: []string{onlyHidden}, mention: onlyHidden},
		// One bad path fails the whole input.
		{name: "a good path then a bad one", paths: []string{filepath.Join(loop, "ok.txt"), broken}, mention: filepath.Join(broken, "zz")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files, err := listFiles(tc.paths)
			if err == nil {
				t.Fatalf("listFiles(%q) = %v, want an error", tc.paths, files)
			}
			if !errors.Is(err, errInput) || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("listFiles(%q): %v: want an input error naming %s", tc.paths, err, tc.mention)
			}
		})
	}

	t.Run("named pipe", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(root, "fifo")
		writeFile(t, filepath.Join(dir, "ok.txt"), "ok\n")
		fifo := filepath.Join(dir, "pipe")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("no named pipes here: %v", err)
		}
		// Reading a pipe would block the map task; it is refused before
		// anything opens it.
		for _, paths := range [][]string{{dir}, {fifo}} {
			if _, err := listFiles(paths); !errors.Is(err, errInput) || !strings.Contains(err.Error(), fifo) {
				t.Errorf("listFiles(%q): %v: want an input error naming %s", paths, err, fifo)
			}
		}
	})
}

// TestSource_FilesSplits: the lines of a tree with links and skipped
// files are the same read whole or split any way, and are the listed
// files' lines in order.
func TestSource_FilesSplits(t *testing.T) {
	t.Parallel()
	tr := newInputTree(t)
	src := source{kind: wordCount, paths: []string{filepath.Join(tr.outside, "file.txt"), tr.in}}
	var want []string
	for _, name := range []string{"outside/file.txt", "in/a.txt", "in/b/c.txt", "outside/file.txt", "outside/dir/f.txt"} {
		want = append(want, strings.Split(strings.TrimSuffix(tr.content[name], "\n"), "\n")...)
	}
	all := lines(t, src.all)
	if !slices.Equal(all, want) {
		t.Fatalf("all lines:\n%q\nwant\n%q", all, want)
	}
	for n := 1; n <= 7; n++ {
		if got := splitLines(t, src, n); !slices.Equal(got, all) {
			t.Errorf("%d splits:\n%q\nwant\n%q", n, got, all)
		}
	}
}
