package lockbench_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	"github.com/lockbench/lockbench/internal/sandbox"
)

// sources parses every non-test Go file of the module.
func sources(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "results") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		files[path] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

// No function of the module's own code runs past 100 lines: a longer one
// does several things, and wants splitting into named steps.
func TestNoFunctionOver100Lines(t *testing.T) {
	fset, files := sources(t)
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				return true
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > 100 {
				t.Errorf("%s: func %s is %d lines (at most 100)", path, fn.Name.Name, lines)
			}
			return false
		})
	}
}

// A driver's name appears as a string only in its own package: the CLI,
// the sandbox, the faults and the reports work from what drivers declare,
// never from a name. Names that are also a server kind's (redis) are left
// out: the kind owns that word too; so are the test- drivers tests
// register for themselves.
func TestDriverNamesStayInTheirPackages(t *testing.T) {
	_, files := sources(t)
	var kindWords []string
	for _, k := range sandbox.Kinds() {
		kindWords = append(kindWords, k.Name, k.Flag)
	}
	home := map[string]string{} // name → directory of the file that registers it
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Name" {
				if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if _, known := impl.Lookup(strings.Trim(lit.Value, `"`)); known {
						home[strings.Trim(lit.Value, `"`)] = filepath.Dir(path)
					}
				}
			}
			return true
		})
	}
	for _, name := range impl.Names() {
		if slices.Contains(kindWords, name) || strings.HasPrefix(name, "test-") {
			continue
		}
		dir, ok := home[name]
		if !ok {
			t.Errorf("driver %s: no Register with Name: %q found", name, name)
			continue
		}
		for path := range files {
			if filepath.Dir(path) == dir {
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"`+name+`"`) {
				t.Errorf("%s names driver %q, which belongs to %s alone", path, name, dir)
			}
		}
	}
}

// Arrows run one way: the fault scenarios, the load scenarios, the plan
// and the root facade meet in the engine below them all; the load
// scenarios know no driver and no server, and their distributions
// (scenarios/dist) nothing of lockbench, and the reports render from result
// data alone, never from a driver, the engine or the facade. The faults
// stage their failures by what drivers and server kinds declare, so they
// import no driver and speak no server's protocol; the drivers' bundle
// knows no fault; the engine reads the servers through the kinds it is
// given, not the sandbox's. A forbidden path ending in "/" forbids each
// package below it, not itself (each is reported); another forbids itself
// and what lies below it (the first such dependency is reported).
func TestArrowsRunOneWay(t *testing.T) {
	const mod = "github.com/lockbench/lockbench"
	for _, tc := range []struct {
		pkg       string
		forbidden []string
	}{
		{"./faults", []string{mod, mod + "/impl/", "github.com/redis/go-redis", "github.com/go-zookeeper/zk"}},
		{".", []string{mod + "/faults", mod + "/impl/all", mod + "/plan"}},
		{"./plan", []string{mod}},
		{"./report", []string{mod, mod + "/impl", mod + "/engine", mod + "/faults", mod + "/internal/sandbox"}},
		{"./result", []string{mod, mod + "/impl", mod + "/engine", mod + "/report"}},
		{"./engine", []string{mod + "/internal/sandbox", mod + "/plan", mod + "/faults"}},
		{"./impl/all", []string{mod + "/faults", mod + "/engine"}},
		{"./scenarios", []string{mod, mod + "/impl/", mod + "/plan", mod + "/faults", mod + "/internal/sandbox"}},
		{"./scenarios/dist", []string{mod + "/engine", mod + "/impl"}},
	} {
		out, err := exec.Command("go", "list", "-deps", tc.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", tc.pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, f := range tc.forbidden {
			for _, d := range deps {
				if each := strings.HasSuffix(f, "/"); each && strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s", tc.pkg, d)
				} else if !each && (d == f || f != mod && strings.HasPrefix(d, f+"/")) {
					t.Errorf("%s depends on %s", tc.pkg, d)
					break
				}
			}
		}
	}
}
