// Command funclen lists every Go function and function literal longer
// than a limit (house style: a function says one thing; 100 lines at
// most), and exits 1 if there is any. bin/, vendor/, testdata/ and dot
// directories are not read. Run by scripts/check-filesize.sh.
//
//	go run ./scripts/funclen [-max 100] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	limit := flag.Int("max", 100, "the most lines a function may have")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	long, err := longFunctions(root, *limit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, l := range long {
		fmt.Println(l)
	}
	if len(long) > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d function(s) over %d lines; split them into named steps\n", len(long), *limit)
		os.Exit(1)
	}
	fmt.Println("funclen: ok")
}

// longFunctions lists, as "file:line name: N lines", the functions under
// root longer than limit lines.
func longFunctions(root string, limit int) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "bin" || name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			what := "func literal"
			switch x := n.(type) {
			case *ast.FuncDecl:
				body, what = x.Body, x.Name.Name
			case *ast.FuncLit:
				body = x.Body
			}
			if body == nil {
				return true
			}
			start := fset.Position(n.Pos())
			if lines := fset.Position(body.Rbrace).Line - start.Line + 1; lines > limit {
				out = append(out, fmt.Sprintf("%s:%d %s: %d lines", start.Filename, start.Line, what, lines))
			}
			return true
		})
		return nil
	})
	return out, err
}
