package docs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// guideFiles are the pages whose commands are tested, relative to docs/.
func guideFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md", "../deploy/k8s/README.md"}, files...)
}

// command is one shell command shown in a guide.
type command struct {
	file string
	line int
	text string // continuation lines joined, trailing comment removed
	exit int    // the exit status the guide says it has (0 unless it says)
	or   int    // another status it says the command may end with ("exits 0 or 5"), or -1
}

func (c command) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

// shellLangs are the fence languages whose lines are commands; a console
// block is a transcript in which only "$ " lines are.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

var (
	fenceRE = regexp.MustCompile("^(\\s*)```\\s*([A-Za-z]*)")
	// exitRE reads the status a command's comment promises: "exits 4",
	// or the two it may end with: "exits 0 or 5".
	exitRE = regexp.MustCompile(`\bexits? (\d+)(?: or (\d+))?\b`)
	// unfencedRE finds a command indented as code outside a fence, which
	// this test would not see.
	unfencedRE = regexp.MustCompile(`^ {4,}(\$ )?(lockbench|go run|docker|kubectl|bash scripts)\b`)
	// plainWord needs no quoting in bash.
	plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)
)

// extract returns the commands of a markdown file in order.
func extract(t *testing.T, file string) []command {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []command
	var lang, indent string
	inFence := false
	var block []numbered
	for i, l := range strings.Split(string(b), "\n") {
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			if inFence {
				if shellLangs[lang] || lang == "" {
					cmds = append(cmds, blockCommands(file, lang, block)...)
				}
				inFence, block = false, nil
				continue
			}
			inFence, indent, lang = true, m[1], m[2]
			continue
		}
		if inFence {
			block = append(block, numbered{i + 1, strings.TrimPrefix(l, indent)})
		} else if unfencedRE.MatchString(l) {
			t.Errorf("%s:%d: a command outside a fenced block, which the doc test cannot see: %s", file, i+1, strings.TrimSpace(l))
		}
	}
	return cmds
}

type numbered struct {
	n    int
	text string
}

// blockCommands joins continuation lines and reads expected statuses: in
// a console block from a following "$ echo $?" and its output line, in a
// script block from an "exits N" in the command's comment.
func blockCommands(file, lang string, block []numbered) []command {
	console := lang == "console"
	var cmds []command
	for i := 0; i < len(block); i++ {
		l := block[i].text
		if console {
			if !strings.HasPrefix(l, "$ ") {
				continue
			}
			l = strings.TrimPrefix(l, "$ ")
		}
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "…") {
			continue
		}
		c := command{file: file, line: block[i].n, or: -1}
		for strings.HasSuffix(l, "\\") && i+1 < len(block) {
			i++
			l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(block[i].text)
		}
		text, comment := splitComment(l)
		c.text = strings.TrimSpace(text)
		if m := exitRE.FindStringSubmatch(comment); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
			if m[2] != "" {
				c.or, _ = strconv.Atoi(m[2])
			}
		}
		if console && c.text == "echo $?" && i+1 < len(block) && len(cmds) > 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(block[i+1].text)); err == nil {
				cmds[len(cmds)-1].exit = n
				i++
			}
			continue
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// splitComment cuts a shell line at a "#" that starts a word outside
// quotes.
func splitComment(l string) (text, comment string) {
	var quote rune
	prev := ' '
	for i, r := range l {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return l[:i], l[i+1:]
		}
		prev = r
	}
	return l, ""
}

// words splits a command into shell words, keeping |, &&, >, ( and ) as
// words of their own, with quotes removed. Guides use no expansions.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			out = append(out, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	sc := bufio.NewReader(strings.NewReader(s))
	for {
		r, _, err := sc.ReadRune()
		if err != nil {
			break
		}
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '|' || r == '>' || r == '(' || r == ')':
			flush()
			out = append(out, string(r))
		case r == '&':
			if next, _, err := sc.ReadRune(); err == nil && next == '&' {
				flush()
				out = append(out, "&&")
			} else {
				cur.WriteRune(r)
				inWord = true
				_ = sc.UnreadRune()
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return out
}

// segments splits words at |, && and parentheses into simple commands;
// a "> FILE" stays in its command.
func segments(ws []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range ws {
		switch w {
		case "|", "&&", "(", ")":
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
		default:
			cur = append(cur, w)
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// quote renders words back into a command line for bash.
func quote(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		switch {
		case w == "|" || w == ">" || w == "&&" || w == "(" || w == ")", plainWord.MatchString(w):
			q[i] = w
		default:
			q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

func TestExtract(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "x.md")
	doc := "text\n\n```sh\nlockbench run --impl redis \\\n  --clients 2   # exits 3\n# a comment\n```\n\n" +
		"```console\n$ lockbench compare a b       # b: worse\nwarning: x\n$ echo $?\n4\n```\n\n```text\nlockbench list\n```\n" +
		"```sh\nlockbench capacity --impl redis   # exits 0 or 5 (no rate met it)\n```\n"
	if err := os.WriteFile(md, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	got := extract(t, md)
	want := []command{
		{file: md, line: 4, text: "lockbench run --impl redis  --clients 2", exit: 3, or: -1},
		{file: md, line: 10, text: "lockbench compare a b", exit: 4, or: -1},
		{file: md, line: 20, text: "lockbench capacity --impl redis", exit: 0, or: 5},
	}
	if len(got) != len(want) {
		t.Fatalf("extract = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("command %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if w := words(`lockbench run --slo 'p99<=5ms' | jq -c '.cells[]' && (cd x && y)`); quote(w) != `lockbench run --slo 'p99<=5ms' | jq -c '.cells[]' && ( cd x && y )` {
		t.Errorf("words/quote round trip = %q", quote(w))
	}
}
