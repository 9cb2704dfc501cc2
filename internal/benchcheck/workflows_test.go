package benchcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The CI gate is only as good as the steps feeding it: `go test … | tee
// new.txt` under GitHub's default shell (bash -e, no pipefail) exits with
// tee's status, so a benchmark that failed passes the job. Every run: step
// that pipes must run under pipefail.

type workflowDefaults struct {
	Run struct {
		Shell string `yaml:"shell"`
	} `yaml:"run"`
}

type workflow struct {
	Defaults workflowDefaults `yaml:"defaults"`
	Jobs     map[string]struct {
		Defaults workflowDefaults `yaml:"defaults"`
		Steps    []struct {
			Name  string `yaml:"name"`
			Run   string `yaml:"run"`
			Shell string `yaml:"shell"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// setPipefail matches `set -o pipefail` and the bundled forms `set -euo
// pipefail`, `set -eo pipefail`, `set -Eeuxo pipefail`.
var setPipefail = regexp.MustCompile(`(?m)^\s*set\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*o\s+pipefail\b`)

// pipeIn reports the first line of script that pipes one command into
// another (a `|` that is not `||`), or -1. It errs on the side of a pipe:
// a `|` in quotes or a comment counts too.
func pipeIn(script string) int {
	for i, l := range strings.Split(script, "\n") {
		if strings.Contains(strings.ReplaceAll(l, "||", ""), "|") {
			return i
		}
	}
	return -1
}

// pipefailProblems lists the steps of a workflow file that pipe without
// pipefail.
func pipefailProblems(file string, data []byte) ([]string, error) {
	var wf workflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var bad []string
	for job, j := range wf.Jobs {
		for i, s := range j.Steps {
			p := pipeIn(s.Run)
			if p < 0 {
				continue
			}
			shell := s.Shell
			if shell == "" {
				shell = j.Defaults.Run.Shell
			}
			if shell == "" {
				shell = wf.Defaults.Run.Shell
			}
			// GitHub runs `shell: bash` as `bash --noprofile --norc -eo
			// pipefail {0}`; the default (no shell:) is `bash -e {0}`.
			if shell == "bash" || strings.Contains(shell, "pipefail") {
				continue
			}
			if loc := setPipefail.FindStringIndex(s.Run); loc != nil && strings.Count(s.Run[:loc[0]], "\n") < p {
				continue
			}
			name := s.Name
			if name == "" {
				name = fmt.Sprintf("step %d", i+1)
			}
			bad = append(bad, fmt.Sprintf("%s: job %s, %q: pipes without pipefail (shell %q): add `shell: bash` or `set -euo pipefail`", file, job, name, shell))
		}
	}
	slices.Sort(bad)
	return bad, nil
}

func TestWorkflowPipesUsePipefail(t *testing.T) {
	dir := filepath.Join("..", "..", ".github", "workflows")
	var files []string
	for _, pat := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no workflow in %s", dir)
	}
	sawBenchWorkflow := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sawBenchWorkflow = sawBenchWorkflow || filepath.Base(f) == "lock-benchmarks.yml"
		bad, err := pipefailProblems(filepath.Base(f), data)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	}
	if !sawBenchWorkflow {
		t.Errorf("lock-benchmarks.yml not found among %v", files)
	}
}

// The checker itself: it must catch the pipe the benchmark workflow had,
// and accept each way of turning pipefail on.
func TestPipefailChecker(t *testing.T) {
	const unsafe = `
on: pull_request
jobs:
  bench:
    runs-on: ubuntu-latest
    steps:
      - name: this change
        run: go test -run '^$' -bench . -count 10 . | tee new.txt
      - name: baseline
        run: |
          git worktree add /tmp/base origin/main
          (cd /tmp/base && go test -bench . .) | tee old.txt
      - name: sh
        shell: sh
        run: go test -bench . | tee new.txt
      - name: set too late
        run: |
          go test -bench . | tee new.txt
          set -o pipefail
`
	bad, err := pipefailProblems("unsafe.yml", []byte(unsafe))
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 4 {
		t.Errorf("found %d unsafe steps, want 4: %q", len(bad), bad)
	}
	for _, ok := range []string{
		"defaults:\n  run:\n    shell: bash\njobs:\n  b:\n    steps:\n      - run: go test | tee x\n",
		"jobs:\n  b:\n    defaults:\n      run:\n        shell: bash\n    steps:\n      - run: go test | tee x\n",
		"jobs:\n  b:\n    steps:\n      - shell: bash\n        run: go test | tee x\n",
		"jobs:\n  b:\n    steps:\n      - shell: bash -eo pipefail {0}\n        run: go test | tee x\n",
		"jobs:\n  b:\n    steps:\n      - run: |\n          set -euo pipefail\n          go test | tee x\n",
		"jobs:\n  b:\n    steps:\n      - run: |\n          set -o pipefail\n          go test | tee x\n",
		"jobs:\n  b:\n    steps:\n      - run: test -f x || go test > x\n",
		"jobs:\n  b:\n    steps:\n      - run: |\n          echo multi-line\n          go test > x\n",
	} {
		if bad, err := pipefailProblems("ok.yml", []byte(ok)); err != nil || len(bad) != 0 {
			t.Errorf("%q: %q %v", ok, bad, err)
		}
	}
}
