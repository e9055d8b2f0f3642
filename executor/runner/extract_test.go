//go:build linux

package runner

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// entry is one archive member: a file (Body), a directory (Dir), a symlink
// (Link) or a hard link (Hard).
type entry struct {
	Name, Body, Link, Hard string
	Dir                    bool
	Mode                   int64
}

func makeTar(t *testing.T, gz bool, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	var zw *gzip.Writer
	w := tar.NewWriter(&buf)
	if gz {
		zw = gzip.NewWriter(&buf)
		w = tar.NewWriter(zw)
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: e.Mode, Typeflag: tar.TypeReg, Size: int64(len(e.Body))}
		switch {
		case e.Dir:
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case e.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Link
		case e.Hard != "":
			h.Typeflag, h.Linkname = tar.TypeLink, e.Hard
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := w.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func makeZip(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		body := e.Body
		switch {
		case e.Dir:
			h.Name += "/"
			h.SetMode(fs.ModeDir | 0o755)
		case e.Link != "":
			h.SetMode(fs.ModeSymlink | 0o777)
			body = e.Link
		default:
			h.SetMode(fs.FileMode(max(e.Mode, 0o644)))
		}
		f, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// prepareArchive fetches an archive from a file URI with Extract into a
// fresh sandbox and returns the sandbox and Prepare's error.
func prepareArchive(t *testing.T, r *Runner, name, file string, data []byte) (string, error) {
	t.Helper()
	src := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return r.Prepare(context.Background(), uriSpec(name, protocol.URI{Value: "file://" + src, Extract: true}))
}

func TestRunner_Prepare_ExtractsArchives(t *testing.T) {
	t.Parallel()
	entries := []entry{
		{Name: "app/", Dir: true},
		{Name: "app/run", Body: "#!/bin/sh\n", Mode: 0o755},
		{Name: "app/lib/data.txt", Body: "data"},
		{Name: "app/current", Link: "lib/data.txt"},
		{Name: "./top.txt", Body: "top"},
	}
	cases := []struct {
		file string
		data []byte
	}{
		{"pkg.tar", makeTar(t, false, entries...)},
		{"pkg.tar.gz", makeTar(t, true, append(entries, entry{Name: "app/hard", Hard: "app/lib/data.txt"})...)},
		{"pkg.TGZ", makeTar(t, true, entries...)},
		{"pkg.zip", makeZip(t, entries...)},
	}
	r := newRunner(t, "")
	for i, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			sandbox, err := prepareArchive(t, r, "extract-"+string(rune('a'+i)), tc.file, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]string{"app/run": "#!/bin/sh\n", "app/lib/data.txt": "data", "app/current": "data", "top.txt": "top"} {
				if got, err := os.ReadFile(filepath.Join(sandbox, name)); err != nil || string(got) != want {
					t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
				}
			}
			if fi, err := os.Stat(filepath.Join(sandbox, "app/run")); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("app/run mode: %v, %v", fi.Mode(), err)
			}
			if _, err := os.Stat(filepath.Join(sandbox, tc.file)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the archive itself was kept: %v", err)
			}
		})
	}
}

func TestRunner_Prepare_ArchiveNotExtractedWithoutFlag(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	src := writeTempFile(t, "pkg.tar", string(makeTar(t, false, entry{Name: "x", Body: "x"})))
	sandbox, err := r.Prepare(context.Background(), uriSpec("plain", protocol.URI{Value: src}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sandbox, "pkg.tar")); err != nil {
		t.Fatal(err)
	}
}

func TestRunner_Prepare_ArchiveEscapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		entries []entry
	}{
		{"dotdot", []entry{{Name: "../evil", Body: "x"}}},
		{"nested-dotdot", []entry{{Name: "a/../../evil", Body: "x"}}},
		{"absolute", []entry{{Name: "/tmp/evil", Body: "x"}}},
		{"control-dir", []entry{{Name: ".allot/exit.json", Body: "{}"}}},
		{"symlink-absolute", []entry{{Name: "l", Link: "/etc"}}},
		{"symlink-relative", []entry{{Name: "a/l", Link: "../../x"}}},
		{"symlink-to-control", []entry{{Name: "l", Link: ".allot"}, {Name: "l/spec.json", Body: "x"}}},
		{"through-symlink", []entry{{Name: "d", Link: "."}, {Name: "d/../evil", Body: "x"}}},
		{"hardlink-out", []entry{{Name: "h", Hard: "../x"}}},
		// Each link is safe when it is made; together they lead out.
		{"late-swap", []entry{{Name: "a/", Dir: true}, {Name: "a/l", Link: "../b/../x"}, {Name: "b", Link: "."}}},
	}
	r := newRunner(t, "")
	for _, tc := range cases {
		for _, kind := range []string{"tar", "zip"} {
			if kind == "zip" && tc.entries[0].Hard != "" {
				continue
			}
			t.Run(tc.name+"."+kind, func(t *testing.T) {
				data := makeTar(t, false, tc.entries...)
				if kind == "zip" {
					data = makeZip(t, tc.entries...)
				}
				_, err := prepareArchive(t, r, tc.name+"-"+kind, "bad."+kind, data)
				if !errors.Is(err, ErrSandboxEscape) {
					t.Fatalf("got %v, want ErrSandboxEscape", err)
				}
				if _, err := os.Lstat(filepath.Join(r.workDir, "evil")); err == nil {
					t.Fatal("evil was written outside the sandbox")
				}
			})
		}
	}
}

func TestResolveIn(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, l := range []struct{ name, target string }{
		{"up", ".."}, {"self", "."}, {"abs-in", filepath.Join(root, "dir")}, {"abs-out", "/etc"},
		{"loop", "loop"}, {"dir/back", "../dir"},
	} {
		if l.name == "dir/back" {
			if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(l.target, filepath.Join(root, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		rel, want string
		err       error
	}{
		{rel: "a/b", want: "a/b"},
		{rel: "a/../b", want: "b"},
		{rel: "..", err: ErrSandboxEscape},
		{rel: "up/x", err: ErrSandboxEscape},
		{rel: "self/self/x", want: "x"},
		{rel: "abs-in/x", want: "dir/x"},
		{rel: "abs-out/x", err: ErrSandboxEscape},
		{rel: "loop/x", err: errLinkLoop},
		{rel: "dir/back/back/x", want: "dir/x"},
		{rel: "self/.allot/x", err: ErrSandboxEscape},
	}
	for _, tc := range cases {
		got, err := resolveIn(root, tc.rel, followLast)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: got %q, %v; want %v", tc.rel, got, err, tc.err)
			}
			continue
		}
		if want := filepath.Join(root, tc.want); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", tc.rel, got, err, want)
		}
	}
}
