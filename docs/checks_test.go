package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// root is the repository, where the guides' commands start.
const root = ".."

// script checks a `bash scripts/…` command: the script exists and bash
// parses it. The README's two scripts take minutes (the test script runs
// this test), so this test does not run them; TestREADMEOpensWithTheTwoCommands
// holds .ci/run to the second.
func (h *harness) script(t *testing.T, c command, ws []string) {
	t.Helper()
	if len(ws) < 2 {
		t.Errorf("%s: no script named", c)
		return
	}
	path := filepath.Join(root, ws[1])
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Errorf("%s: bash -n %s: %v\n%s", c, ws[1], err, out)
	}
	h.checked.Add(1)
}

// goCommand checks a `go test -bench PATTERN PKG` command: every name
// its pattern asks for is a benchmark of that package. `go install` of a
// tool needs the network: named, not checked.
func (h *harness) goCommand(t *testing.T, c command, ws []string) {
	t.Helper()
	switch {
	case len(ws) > 1 && ws[1] == "install":
		h.skip(c)
		return
	case len(ws) < 2 || ws[1] != "test":
		t.Errorf("%s: a go command this test does not know", c)
		return
	}
	i := slices.Index(ws, "-bench")
	if i < 0 || i+1 >= len(ws) {
		t.Errorf("%s: no -bench pattern", c)
		return
	}
	pkg := "."
	for _, w := range ws[2:] {
		if w == "." || strings.HasPrefix(w, "./") {
			pkg = w
		}
	}
	tests, _ := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
	var src strings.Builder
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, name := range strings.Split(strings.Trim(ws[i+1], "^$"), "|") {
		name = strings.SplitN(name, "/", 2)[0]
		if !strings.Contains(src.String(), "func "+name+"(b *testing.B)") {
			t.Errorf("%s: package %s has no %s", c, pkg, name)
		}
	}
	h.checked.Add(1)
}

// docker checks what a Docker command names: the compose file and its
// services, the Dockerfile. A compose `run` of the lockbench service runs
// its lockbench arguments here instead, results under the working
// directory.
func (h *harness) docker(t *testing.T, work string, c command, ws []string) {
	t.Helper()
	switch {
	case len(ws) > 1 && ws[1] == "compose":
		h.compose(t, work, c, ws[2:])
	case len(ws) > 1 && ws[1] == "build":
		fs := parseFlags(ws[2:])
		for _, f := range fs {
			if f.name == "-f" || f.name == "" {
				mustExist(t, c, f.value)
			}
		}
		h.checked.Add(1)
	default: // tag, push: a registry
		h.skip(c)
	}
}

func (h *harness) compose(t *testing.T, work string, c command, ws []string) {
	t.Helper()
	if len(ws) < 3 || ws[0] != "-f" {
		t.Errorf("%s: want docker compose -f FILE …", c)
		return
	}
	services := composeServices(t, c, ws[1])
	sub, rest := ws[2], ws[3:]
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case w == "--exit-code-from" && i+1 < len(rest):
			i++
			checkService(t, c, services, rest[i])
		case strings.HasPrefix(w, "-"):
		case sub == "run":
			checkService(t, c, services, w)
			if args := rest[i+1:]; len(args) > 0 && w == "lockbench" {
				h.lockbench(t, work, c, append([]string{"lockbench"}, args...), nil)
				return
			}
			h.checked.Add(1)
			return
		}
	}
	h.checked.Add(1)
}

func composeServices(t *testing.T, c command, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Errorf("%s: %v", c, err)
		return nil
	}
	var doc struct {
		Services map[string]any `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Errorf("%s: %s: %v", c, file, err)
	}
	return doc.Services
}

func checkService(t *testing.T, c command, services map[string]any, name string) {
	t.Helper()
	if _, ok := services[name]; !ok {
		t.Errorf("%s: no service %q in the compose file", c, name)
	}
}

func mustExist(t *testing.T, c command, path string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, path)); err != nil {
		t.Errorf("%s: %v", c, err)
	}
}

// labelRE and objectRE find what a kubectl command names in the
// manifests: a label selector, a TYPE/NAME, a pod of `kubectl cp`.
var (
	objectRE = regexp.MustCompile(`^(job|pod|deployment|statefulset)/([a-z0-9-]+)$`)
	cpRE     = regexp.MustCompile(`^([a-z0-9-]+):/`)
)

// kube checks a Kubernetes command against deploy/k8s: a kustomization
// and its resources for -k, a file for -f, a label or an object that
// some manifest defines. What names nothing there (a namespace, a
// context, kind) needs a cluster.
func (h *harness) kube(t *testing.T, c command, segs [][]string) {
	t.Helper()
	manifests := manifestText(t)
	found := 0
	dir := ""
	for _, ws := range segs {
		for i, w := range ws {
			next := ""
			if i+1 < len(ws) {
				next = ws[i+1]
			}
			switch {
			case ws[0] == "cd" && i == 1:
				dir = w
				checkKustomization(t, c, w)
				found++
			case ws[0] == "kustomize" && strings.Contains(w, "=") && dir != "":
				name, _, _ := strings.Cut(w, "=")
				b, _ := os.ReadFile(filepath.Join(root, dir, "kustomization.yaml"))
				if !strings.Contains(string(b), "name: "+name) {
					t.Errorf("%s: %s/kustomization.yaml sets no image %q", c, dir, name)
				}
			case w == "-k":
				checkKustomization(t, c, next)
				found++
			case w == "-f":
				mustExist(t, c, next)
				found++
			case w == "-l":
				k, v, _ := strings.Cut(next, "=")
				if !strings.Contains(manifests, k+": "+v) {
					t.Errorf("%s: no manifest carries the label %s", c, next)
				}
				found++
			case objectRE.MatchString(w) || cpRE.MatchString(w):
				name := strings.TrimSuffix(cpRE.FindString(w), ":/")
				if m := objectRE.FindStringSubmatch(w); m != nil {
					name = m[2]
				}
				if !strings.Contains(manifests, "name: "+name) {
					t.Errorf("%s: no manifest defines %s", c, name)
				}
				found++
			}
		}
	}
	if found == 0 {
		h.skip(c)
		return
	}
	h.checked.Add(1)
}

// checkKustomization checks that dir is a kustomization whose resources
// exist; deploy/k8s's own tests decode each against the API types.
func checkKustomization(t *testing.T, c command, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, dir, "kustomization.yaml"))
	if err != nil {
		t.Errorf("%s: %v", c, err)
		return
	}
	var k struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Errorf("%s: %s: %v", c, dir, err)
	}
	for _, r := range k.Resources {
		mustExist(t, c, filepath.Join(dir, r))
	}
}

func manifestText(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "deploy/k8s/*/*.yaml"))
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}
