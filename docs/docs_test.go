// Package docs holds lockbench's guides. Its test extracts every command
// the README and the guides show and runs each one that can run on this
// machine, shortened, against real servers; the rest (Docker, Kubernetes,
// other machines) it checks as far as it can here, so that no guide
// promises a command that no longer works.
package docs

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// commandTimeout bounds one shortened command; the slowest (a fault
// scenario waiting out a TTL, a sandbox staging a failover) take seconds.
const commandTimeout = 2 * time.Minute

// filesAtOnce is how many guides' commands run at once.
const filesAtOnce = 4

// TestGuideCommands runs the commands of the README and of every guide,
// file by file in order (a later command may read what an earlier one
// wrote), each in the file's own working directory.
func TestGuideCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs lockbench against real servers")
	}
	h := newHarness(t)
	// The files run side by side: most of a shortened command's time is
	// spent waiting (a TTL, a JVM starting, a cell of fixed length), and
	// every unsharded run keeps its locks in a namespace of its own on the
	// shared servers. Their subtests run from goroutines, filesAtOnce at a
	// time, rather than as parallel subtests, which go test caps at
	// -parallel (the number of cores, 2 here).
	t.Run("files", func(t *testing.T) {
		var wg sync.WaitGroup
		slots := make(chan struct{}, filesAtOnce)
		for _, file := range guideFiles(t) {
			cmds := extract(t, file)
			name := strings.TrimSuffix(strings.ReplaceAll(strings.TrimPrefix(file, "../"), "/", "-"), ".md")
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				t.Run(name, func(t *testing.T) {
					work := t.TempDir()
					// Files a guide's commands read but no command of it writes
					// (the benchmark outputs of the CI guide) are its testdata.
					if err := os.CopyFS(work, os.DirFS(filepath.Join("testdata", name))); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
					for _, c := range cmds {
						h.do(t, work, c)
					}
				})
			})
		}
		wg.Wait()
	})
	t.Logf("ran %d commands, checked %d without running, %d need tools this test does not run (%s)",
		h.ran.Load(), h.checked.Load(), len(h.unchecked), strings.Join(h.unchecked, "; "))
	if h.ran.Load() == 0 {
		t.Error("no guide command ran")
	}
}

// harness holds what every command shares: the lockbench binary, built
// once, and the servers of one sandbox, which every run uses through the
// LOCKBENCH_… variables instead of starting its own.
type harness struct {
	bin     string   // directory holding the lockbench binary
	env     []string // os.Environ, PATH and the sandbox's addresses
	ran     atomic.Int64
	checked atomic.Int64
	mu      sync.Mutex
	// unchecked names the commands that need what this machine lacks
	// (Docker, a cluster, a tool from the network) and have nothing left
	// to check once their paths are.
	unchecked []string
}

// skip records a command that needs what this machine lacks.
func (h *harness) skip(c command) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unchecked = append(h.unchecked, c.text)
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	bin := t.TempDir()
	start := time.Now()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "lockbench"), "../cmd/lockbench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/lockbench: %v\n%s", err, out)
	}
	t.Logf("built lockbench in %v", time.Since(start).Round(10*time.Millisecond))
	h := &harness{bin: bin}
	h.env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	start = time.Now()
	h.env = append(h.env, startSandbox(t, filepath.Join(bin, "lockbench"))...)
	t.Logf("started the sandbox in %v", time.Since(start).Round(10*time.Millisecond))
	return h
}

// startSandbox starts `lockbench sandbox` and returns its LOCKBENCH_…
// lines; the test's cleanup stops it as Ctrl-C would.
func startSandbox(t *testing.T, lockbench string) []string {
	t.Helper()
	cmd := exec.Command(lockbench, "sandbox")
	interruptOnParentDeath(cmd)
	var log strings.Builder // read only once the sandbox has ended
	cmd.Stderr = &log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	var env []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "LOCKBENCH_") {
			env = append(env, l)
		}
		if strings.HasPrefix(l, "# up") {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return env
		}
	}
	err = cmd.Wait()
	t.Fatalf("lockbench sandbox ended before its servers were up: %v\n%s", err, log.String())
	return nil
}

// do runs or checks one command of a guide.
func (h *harness) do(t *testing.T, work string, c command) {
	t.Helper()
	segs := segments(words(c.text))
	if len(segs) == 0 {
		return
	}
	first := segs[0]
	for len(first) > 0 && strings.Contains(first[0], "=") && !strings.HasPrefix(first[0], "-") {
		first = first[1:] // VAR=value before a command
	}
	if len(first) == 0 {
		t.Errorf("%s: only variables, no command; fence the block as text", c)
		return
	}
	switch {
	case len(first) >= 3 && first[0] == "go" && first[1] == "run" && first[2] == "./cmd/lockbench":
		h.lockbench(t, work, c, append([]string{"lockbench"}, first[3:]...), segs[1:])
	case first[0] == "lockbench":
		h.lockbench(t, work, c, first, segs[1:])
	case first[0] == "bash":
		h.script(t, c, first)
	case first[0] == "go":
		h.goCommand(t, c, first)
	case first[0] == "docker":
		h.docker(t, work, c, first)
	case first[0] == "kubectl", first[0] == "cd", first[0] == "kustomize", first[0] == "kind":
		h.kube(t, c, segs)
	case first[0] == "benchstat":
		h.skip(c)
	default:
		t.Errorf("%s: a command this test does not know; teach it (docs/docs_test.go) or fence the block as text", c)
	}
}

// lockbench runs a lockbench command, shortened, and checks its exit
// status; a pipeline's other programs run too when they are installed.
func (h *harness) lockbench(t *testing.T, work string, c command, args []string, rest [][]string) {
	t.Helper()
	if len(args) > 1 && (args[1] == "run" || args[1] == "capacity") {
		args = append(args[:2:2], shorten(args[1], args[2:])...)
	}
	if len(args) > 1 && args[1] == "suite" && (len(args) == 2 || strings.HasPrefix(args[2], "-")) {
		args = append(args[:2:2], shortenSuite(args[2:])...)
	}
	if i, n := shardsOf(args); n > 0 {
		h.shards(t, work, c, args, i, n)
		return
	}
	line := append([]string(nil), args...)
	for _, seg := range rest {
		if _, err := exec.LookPath(seg[0]); err != nil {
			break // jq or the like is not installed: lockbench's part still runs
		}
		line = append(append(line, "|"), seg...)
	}
	start := time.Now()
	res := h.run(t, work, line)
	t.Logf("%s: exit %d in %v", c, res.exit, time.Since(start).Round(10*time.Millisecond))
	h.ran.Add(1)
	h.judge(t, work, c, args, res)
}

// result is how one process ended.
type result struct {
	exit    int
	stderr  string
	scraped string // the last /metrics page read while it ran, if any
}

// run runs a command line under bash in work, with pipefail so that
// lockbench's status is the pipeline's.
func (h *harness) run(t *testing.T, work string, line []string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", quote(line))
	cmd.Dir, cmd.Env = work, h.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var res result
	res.stderr, res.scraped = readStderr(stderr) // until the command closes it
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.exit = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", quote(line), err)
	}
	if ctx.Err() != nil {
		res.exit = -1
		res.stderr += "\n(killed after " + commandTimeout.String() + ")"
	}
	return res
}

// readStderr keeps stderr's last lines and, when the command serves
// --metrics-addr, scrapes it every 100ms while it runs, as Prometheus
// would, so that the run's wait for a last scrape ends at once.
func readStderr(r io.Reader) (tail, scraped string) {
	var lines []string
	var mu sync.Mutex
	done := make(chan struct{})
	var scrapes sync.WaitGroup
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		lines = append(lines, l)
		if len(lines) > 40 {
			lines = lines[1:]
		}
		if url, ok := strings.CutPrefix(l, "metrics: "); ok {
			scrapes.Add(1)
			go func() {
				defer scrapes.Done()
				for {
					if page, err := fetch(url); err == nil {
						mu.Lock()
						scraped = page
						mu.Unlock()
					}
					select {
					case <-done:
						return
					case <-time.After(100 * time.Millisecond):
					}
				}
			}()
		}
	}
	close(done)
	scrapes.Wait()
	return strings.Join(lines, "\n"), scraped
}

func fetch(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// judge checks a lockbench command's end against the guide: its exit
// status (the one it says, or the other it names: "exits 0 or 5"), the
// results it was asked to write, the live metrics it served. The one end
// the guide cannot name is this test's own: a capacity search cut short
// by the --max-time cap the test adds, which says so.
func (h *harness) judge(t *testing.T, work string, c command, args []string, res result) {
	t.Helper()
	capped := len(args) > 1 && args[1] == "capacity" &&
		res.exit == 1 && strings.Contains(res.stderr, "--max-time "+capacityCap+" reached")
	if res.exit != c.exit && res.exit != c.or && !capped {
		t.Errorf("%s: exit %d, the guide says %d; stderr ends:\n%s", c, res.exit, c.exit, res.stderr)
		return
	}
	if len(args) > 1 && slices.Contains([]string{"run", "capacity"}, args[1]) && res.exit != 2 {
		out := "."
		for _, f := range parseFlags(args[2:]) {
			if f.name == "--out" {
				out = f.value
			}
		}
		if out != "." && !exists(filepath.Join(work, out)) {
			t.Errorf("%s: wrote no %s", c, out)
		}
	}
	if slices.Contains(args, "--metrics-addr") && !strings.Contains(res.scraped, "lockbench_acquisitions_total") {
		t.Errorf("%s: /metrics never served lockbench_acquisitions_total; last page:\n%.400s", c, res.scraped)
	}
}

// shards runs every shard of a sharded command at once, as the guide's
// other machines would, each against the test's sandbox.
func (h *harness) shards(t *testing.T, work string, c command, args []string, i, n int) {
	t.Helper()
	results := make([]result, n)
	var wg sync.WaitGroup
	for j := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[j] = h.run(t, work, asShard(args, i, j))
		}()
	}
	wg.Wait()
	h.ran.Add(1)
	for j, res := range results {
		if res.exit != c.exit {
			t.Errorf("%s: shard %d/%d exit %d, the guide says %d; stderr ends:\n%s", c, j, n, res.exit, c.exit, res.stderr)
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
