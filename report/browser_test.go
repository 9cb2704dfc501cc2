package report

import (
	"github.com/lockbench/lockbench/result"

	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser test settings, from the environment:
//
//	LOCKBENCH_CHROMIUM        the browser to run (default: chromium, chromium-browser or google-chrome on PATH)
//	LOCKBENCH_SCREENSHOT_DIR  where screenshots go (default: the test's temporary directory)
//	LOCKBENCH_REPORT_DIR      a results directory whose report.html is checked too (a real run's)
const viewportW, viewportH = 1280, 900

// browserPath finds a Chromium to drive, or says why there is none.
func browserPath() (string, error) {
	if p := os.Getenv("LOCKBENCH_CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium, chromium-browser or google-chrome on PATH (apt-get install chromium, or set LOCKBENCH_CHROMIUM)")
}

// browserFixture is the fixture run with what the verdict has lines for
// beyond it: an open loop that saturates and a pause whose stale grant was
// fenced.
func browserFixture() *Summary {
	sum := fixtureSummary()
	open := func(n int, perS float64, dropped int64) Cell {
		c := Cell{Impl: "zk-pred", Scenario: "rate", Kind: result.KindOpen, Clients: n, Locks: 1, DurationS: 3,
			Acquires: int64(perS * 3), AcquiresPerS: perS,
			AcquireLatencyUs: Latency{P50: 900, P90: 2000, P95: 2600, P99: 4000, P999: 9000, P9999: 12000, Max: 15000}}
		c.Open = &result.OpenLoop{Rate: 1000, Arrival: "constant", MaxInflight: n, Offered: 3000, Dropped: dropped,
			ServiceLatencyUs: Latency{P50: 700, P90: 1200, P95: 1500, P99: 2500, P999: 4000, P9999: 5000, Max: 6000}}
		return c
	}
	pause := Cell{Impl: "zk-pred", Scenario: "pause", Kind: result.KindFault, Clients: 2, Locks: 1, DurationS: 9, Acquires: 6,
		AcquiresPerS: 0.7,
		Faults: &result.Faults{Repeats: 3, ConfiguredMs: 2000, Bound: result.BoundSession, StaleWritesRejected: 3,
			RecoveryMs: &result.Spread{Count: 3, P50: 2100, P99: 2300, Max: 2300},
			Pause:      &result.PauseFigures{StaleWrites: 3, UnfencedAccepted: 3, LockFences: true}}}
	sum.Cells = append(sum.Cells, open(4, 1000, 0), open(16, 600, 1200), pause)
	return sum
}

func TestReportInBrowser(t *testing.T) {
	if os.Getenv("LOCKBENCH_NO_BROWSER") != "" {
		t.Skip("browser test skipped: LOCKBENCH_NO_BROWSER is set (scripts/install-servers then installs no browser)")
	}
	exe, err := browserPath()
	if err != nil && os.Getenv("CI") != "" {
		t.Fatalf("%v (CI is set: the install step installs a browser unless LOCKBENCH_NO_BROWSER is set)", err)
	}
	if err != nil {
		t.Skipf("browser test skipped: %v", err)
	}
	shots := os.Getenv("LOCKBENCH_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	dir, _ := renderFixture(t, browserFixture(), true, RenderOptions{})
	pages := map[string]string{"fixture": dir}
	if d := os.Getenv("LOCKBENCH_REPORT_DIR"); d != "" {
		pages[filepath.Base(filepath.Clean(d))] = d
	}

	actx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(viewportW, viewportH))...)
	defer cancel()
	t.Run("broken page is caught", func(t *testing.T) {
		// The checks can fail: a page with no verdict, a wide table, a
		// missing image and a script error fails every one of them.
		bad := filepath.Join(t.TempDir(), HTMLFile)
		page := `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<table style="width:2000px"><tr><td>wide</td></tr></table><img alt="gone" src="missing.png">
<script>console.error("boom")</script></body></html>`
		if err := os.WriteFile(bad, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		facts, errs, _ := openInBrowser(t, actx, bad)
		if got := problems(facts, errs); len(got) != 4 {
			t.Errorf("a broken page gave %d problems, want 4 (verdict, image, scroll, console): %q", len(got), got)
		}
	})
	for name, d := range pages {
		t.Run(name, func(t *testing.T) {
			facts, errs, png := openInBrowser(t, actx, filepath.Join(d, HTMLFile))
			for _, p := range problems(facts, errs) {
				t.Error(p)
			}
			if name == "fixture" {
				want := []string{"Safety:", "Throughput:", "Herd cost:", "Best client count tried (hot):", "Best client count tried (rate):", "Open loop:", "Fault cost:"}
				if !slices.Equal(facts.Questions, want) {
					t.Errorf("verdict answers %q, want %q", facts.Questions, want)
				}
				if facts.Images < 9 {
					t.Errorf("%d images drawn, want the fixture's 9 plots or more", facts.Images)
				}
			}
			out := filepath.Join(shots, "report-"+name+".png")
			if err := os.WriteFile(out, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot of the top of %s: %s", filepath.Join(d, HTMLFile), out)
		})
	}
}

// pageFacts is what the browser says about a loaded report.html.
type pageFacts struct {
	Verdict       string   `json:"verdict"`
	Questions     []string `json:"questions"`
	BrokenAnchors []string `json:"brokenAnchors"`
	Images        int      `json:"images"`
	BrokenImages  []string `json:"brokenImages"`
	ScrollWidth   int      `json:"scrollWidth"`
	ClientWidth   int      `json:"clientWidth"`
	Wide          []string `json:"wide"`
}

const factsJS = `(() => {
  const v = document.getElementById('verdict');
  const links = v ? [...v.querySelectorAll('a[href^="#"]')] : [];
  return {
    verdict: v ? v.innerText : '',
    questions: v ? [...v.querySelectorAll('.q')].map(e => e.innerText) : [],
    brokenAnchors: links.map(a => a.getAttribute('href').slice(1)).filter(id => !document.getElementById(id)),
    images: document.images.length,
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    wide: [...document.querySelectorAll('table, figure')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth).map(e => e.tagName + ' ' + (e.id || (e.previousElementSibling || {}).id || '')),
  };
})()`

// openInBrowser opens page at 1280 px wide and reads what a person sees,
// the console's errors, and a screenshot of the top of the page.
func openInBrowser(t *testing.T, actx context.Context, page string) (pageFacts, []string, []byte) {
	var mu sync.Mutex
	var consoleErrs []string
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				consoleErrs = append(consoleErrs, fmt.Sprintf("console.error %d args", len(ev.Args)))
			}
		case *runtime.EventExceptionThrown:
			consoleErrs = append(consoleErrs, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				consoleErrs = append(consoleErrs, "log: "+ev.Entry.Text)
			}
		}
	}))
	defer cancel()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewportW, viewportH), chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("open %s: %v", page, err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()
	facts, err := chromedp.Run(tctx, chromedp.Evaluate[pageFacts](factsJS))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return facts, slices.Clone(consoleErrs), png
}

// problems lists what is wrong with a page as a person would see it.
func problems(f pageFacts, consoleErrs []string) []string {
	var out []string
	if !strings.Contains(f.Verdict, "Safety:") || len(f.Questions) < 2 {
		out = append(out, fmt.Sprintf("the verdict at the top answers %v: %q", f.Questions, f.Verdict))
	}
	if len(f.BrokenAnchors) > 0 {
		out = append(out, fmt.Sprintf("verdict links to sections that are not there: %v", f.BrokenAnchors))
	}
	if len(f.BrokenImages) > 0 {
		out = append(out, fmt.Sprintf("of %d images, not drawn: %v", f.Images, f.BrokenImages))
	}
	if f.ScrollWidth > f.ClientWidth {
		out = append(out, fmt.Sprintf("horizontal scroll at %d px: page is %d px wide; too wide: %v", f.ClientWidth, f.ScrollWidth, f.Wide))
	}
	if len(consoleErrs) > 0 {
		out = append(out, fmt.Sprintf("console errors: %v", consoleErrs))
	}
	return out
}
