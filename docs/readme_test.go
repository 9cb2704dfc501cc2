package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README opens with the two commands a newcomer needs, and CI runs
// the second of them: the README's promise is what CI checks.
func TestREADMEOpensWithTheTwoCommands(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 6 || !strings.HasPrefix(lines[0], "# ") || lines[2] != "```sh" || lines[5] != "```" {
		t.Fatalf("README.md does not open with its title and one block of two commands:\n%s", strings.Join(lines[:min(6, len(lines))], "\n"))
	}
	demo, _ := splitComment(lines[3])
	test, _ := splitComment(lines[4])
	if strings.TrimSpace(demo) != "bash scripts/demo" || strings.TrimSpace(test) != "bash scripts/test" {
		t.Errorf("README.md's commands are %q and %q, want bash scripts/demo and bash scripts/test", demo, test)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\n"+string(ci)+"\n", "\n"+strings.TrimSpace(test)+"\n") {
		t.Errorf(".ci/run does not run README.md's test command %q", strings.TrimSpace(test))
	}
	if n := len(lines); n > 100 {
		t.Errorf("README.md has %d lines; it should fit a screen or two, the rest belongs in docs/", n)
	}
}

// anchors are the ids GitHub gives a page's headings: lower case,
// punctuation dropped, spaces as hyphens.
func anchors(page string) []string {
	var ids []string
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		ids = append(ids, strings.ReplaceAll(punctRE.ReplaceAllString(title, ""), " ", "-"))
	}
	return ids
}

// punctRE is what a heading's anchor drops.
var punctRE = regexp.MustCompile(`[^\p{L}\p{N} _-]`)

// linkRE finds a markdown link's target.
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and the guides reaches a file, and
// every guide is linked from the README.
func TestLinksResolve(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range guideFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") {
				continue
			}
			path := file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), target)
			}
			page, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: link %s: %v", file, m[1], err)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(string(page)), anchor) {
				t.Errorf("%s: link %s: %s has no heading #%s", file, m[1], target, anchor)
			}
		}
		if name := filepath.Base(file); filepath.Dir(file) == "." && !strings.Contains(string(readme), "(docs/"+name+")") {
			t.Errorf("README.md's table of guides does not link docs/%s", name)
		}
	}
}
