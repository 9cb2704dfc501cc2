package all

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every package under impl/ that registers a driver is imported here: the
// "every row" tests (the matrix, the benchmarks, the production profile)
// take their rows from the registry, so a driver package left out of this
// list would be left out of all of them without a word.
func TestEveryDriverPackageIsImported(t *testing.T) {
	fset := token.NewFileSet()
	var imported []string
	for _, f := range []string{"all.go", "k8s.go"} {
		file, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range file.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imported = append(imported, p)
		}
	}
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	registering := 0
	for _, d := range dirs {
		if !d.IsDir() || !registers(t, filepath.Join("..", d.Name())) {
			continue
		}
		registering++
		if p := "github.com/lockbench/lockbench/impl/" + d.Name(); !slices.Contains(imported, p) {
			t.Errorf("impl/%s registers a driver but impl/all does not import it: no \"every row\" test runs it", d.Name())
		}
	}
	if registering < 10 {
		t.Errorf("found %d packages that register a driver: the search is broken", registering)
	}
}

// registers says whether a non-test file of dir calls impl.Register.
func registers(t *testing.T, dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "impl.Register(") {
			return true
		}
	}
	return false
}
