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

// layers are the module's rooms from the leaves up to the commands, as
// path patterns: "x" is the package x, "x/" each package below x (not x
// itself), "x/..." both. A package takes the layer of its first match;
// one that matches none fails TestNoArrowRunsBackUp, so a new package is
// placed here on purpose.
var layers = []struct {
	name     string
	patterns []string
}{
	{"leaves: data, names, distributions, the search's arithmetic, parsers, deployment files, the suite's definition", []string{
		"result", "result/hlog", "suite", "dist", "capacity", "internal/ranktest", "internal/allocs", "internal/serverkind", "internal/dsn", "internal/benchcheck", "internal/clockshim", "compose", "deploy/..."}},
	{"judgement: typed findings from result data; histories checked for linearizability; the mutual-exclusion checker", []string{"judge", "linear", "exclusion"}},
	{"the lock interface, the sandbox (its core and a folder per server kind), rendering", []string{"impl", "internal/sandbox/...", "report", "report/site"}},
	{"the drivers and the engine; the servers for tests", []string{"impl/", "engine", "sandboxtest"}},
	{"what runs on the engine: load and fault scenarios, the shards' rendezvous", []string{"scenarios", "faults", "rendezvous"}},
	{"runs: plans, capacity searches, the facade", []string{"plan", "."}},
	{"a run watched live", []string{"metrics"}},
	{"the commands, and the guides' test that runs them", []string{"cmd/...", "docs"}},
}

// backUp names the imports allowed to run from a lower layer to a higher
// one, "importer -> imported": at most one, each a decision written here.
var backUp = map[string]string{}

// layerOf is the index in layers of pkg (relative to the module, "." for
// its root), or -1.
func layerOf(pkg string) int {
	best := -1
	for i, l := range layers {
		for _, p := range l.patterns {
			switch {
			case strings.HasSuffix(p, "/..."):
				base := strings.TrimSuffix(p, "/...")
				if pkg == base || strings.HasPrefix(pkg, base+"/") {
					return i
				}
			case strings.HasSuffix(p, "/"):
				if strings.HasPrefix(pkg, p) && best < 0 {
					best = i
				}
			case pkg == p:
				return i
			}
		}
	}
	return best
}

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
// (dist) nothing of lockbench, and the reports render from result
// data alone, never from a driver, the engine or the facade. The faults
// stage their failures by what drivers and server kinds declare, so they
// import no driver and speak no server's protocol; the drivers' bundle
// knows no fault; the engine reads the servers through the kinds it is
// given, not the sandbox's; the rendezvous meets through servers it knows
// by their kind's name alone. A forbidden path ending in "/" forbids each
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
		{"./result", []string{mod, mod + "/impl", mod + "/engine", mod + "/report", mod + "/judge"}},
		{"./judge", []string{mod, mod + "/impl", mod + "/engine", mod + "/report", mod + "/faults", mod + "/plan"}},
		{"./engine", []string{mod + "/internal/sandbox", mod + "/plan", mod + "/faults"}},
		{"./impl/all", []string{mod + "/faults", mod + "/engine"}},
		{"./scenarios", []string{mod, mod + "/impl/", mod + "/plan", mod + "/faults", mod + "/internal/sandbox"}},
		{"./dist", []string{mod, mod + "/engine", mod + "/impl", mod + "/result"}},
		{"./rendezvous", []string{mod + "/internal/sandbox"}},
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

// Imports run down the layers, never back up (but for at most one named
// exception), and internal/ holds leaves only: a package there imports
// nothing of the module outside internal/. The rooms then show the
// architecture: a reader who knows a package's layer knows what it may
// depend on.
func TestNoArrowRunsBackUp(t *testing.T) {
	const mod = "github.com/lockbench/lockbench"
	if len(backUp) > 1 {
		t.Fatalf("%d exceptions to the layers: at most one", len(backUp))
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) string {
		if p == mod {
			return "."
		}
		return strings.TrimPrefix(p, mod+"/")
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := rel(f[0])
		from := layerOf(pkg)
		if from < 0 {
			t.Errorf("%s is in no layer: place it in structure_test.go's layers", pkg)
			continue
		}
		for _, imp := range f[1:] {
			if imp != mod && !strings.HasPrefix(imp, mod+"/") {
				continue
			}
			dep := rel(imp)
			if to := layerOf(dep); to > from && backUp[pkg] != dep {
				t.Errorf("%s (%s) imports %s (%s): an arrow back up", pkg, layers[from].name, dep, layers[to].name)
			}
			if strings.HasPrefix(pkg, "internal/") && !strings.HasPrefix(dep, "internal/") {
				t.Errorf("%s imports %s: internal/ holds leaves only", pkg, dep)
			}
			seen++
		}
	}
	if seen < 50 { // the module has over a hundred arrows: go list answered something else
		t.Errorf("only %d arrows inside the module", seen)
	}
}
