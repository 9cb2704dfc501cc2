package suite

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lockbench/lockbench/result"
)

// TestVersionsArePinned fails when a version's workload files change
// under its name: a changed workload is a new version, or two tables
// that both say v1 would not mean the same.
func TestVersionsArePinned(t *testing.T) {
	for _, v := range Versions() {
		s, err := Load(v)
		if err != nil {
			t.Fatal(err)
		}
		if s.Digest != pinned[v] {
			t.Errorf("suite %s's workload files changed (digest %s, pinned %s): copy them to a new version's folder, change it there, and pin it; %s must mean what it meant", v, s.Digest, pinned[v], v)
		}
	}
}

func TestV1(t *testing.T) {
	s, err := Load("v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range s.Workloads {
		names = append(names, w.Name)
	}
	// The order the suite runs them in: the cheap questions first.
	want := []string{"uncontended", "hot", "zipf-keys", "herd", "wait", "faults", "faults-more", "capacity"}
	if !slices.Equal(names, want) {
		t.Errorf("workloads %v, want %v", names, want)
	}
	tiers := map[Tier][]string{}
	for _, tier := range Tiers() {
		ws, err := s.Select(tier, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			tiers[tier] = append(tiers[tier], w.Name)
		}
	}
	if got := tiers[Quick]; !slices.Equal(got, []string{"uncontended", "hot", "zipf-keys", "herd"}) {
		t.Errorf("quick %v", got)
	}
	if got := tiers[Standard]; !slices.Equal(got, []string{"uncontended", "hot", "zipf-keys", "herd", "wait", "faults"}) {
		t.Errorf("standard %v", got)
	}
	if got := tiers[Full]; !slices.Equal(got, want) {
		t.Errorf("full %v", got)
	}
	ws, err := s.Select(Standard, []string{"herd"})
	if err != nil || len(ws) != 1 {
		t.Fatalf("select herd: %v %v", ws, err)
	}
	if got := strings.Join(ws[0].ArgsFor(Standard), " "); got != "--scenario burst --hold 1ms --clients 8,32,128 --repeat 5" {
		t.Errorf("herd's standard command line %q", got)
	}
	// The Lease row's short clock, in the quick and standard tiers only,
	// and only when the row runs.
	if got := strings.Join(ws[0].RowArgsFor(Standard, []string{"redis", "k8s-lease"}), " "); got != "--k8s-lease-duration 2s --k8s-renew-deadline 1s --k8s-retry-period 50ms --k8s-qps -1" {
		t.Errorf("herd's standard flags for k8s-lease %q", got)
	}
	if got := ws[0].RowArgsFor(Standard, []string{"redis"}); len(got) != 0 {
		t.Errorf("flags %q for a row that does not run", got)
	}
	if got := ws[0].RowArgsFor(Full, []string{"k8s-lease"}); len(got) != 0 {
		t.Errorf("the full tier's Lease row runs on client-go's defaults, got %q", got)
	}
	if _, err := s.Select(Quick, []string{"capacity"}); !errors.Is(err, ErrSuite) {
		t.Errorf("capacity in the quick tier: %v, want ErrSuite (it runs in full only)", err)
	}
	if _, err := s.Select(Quick, []string{"nope"}); !errors.Is(err, ErrSuite) {
		t.Errorf("an unknown workload: %v, want ErrSuite", err)
	}
	if _, err := Load("v0"); !errors.Is(err, ErrSuite) {
		t.Errorf("Load(v0): %v, want ErrSuite", err)
	}
}

func TestParseRefuses(t *testing.T) {
	ok := "question: q?\ncommand: run\nquick: --clients 1\n"
	for _, tc := range []struct{ name, text, want string }{
		{"no question", "command: run\nquick: x\n", "no question"},
		{"no command", "question: q?\nquick: x\n", "no command"},
		{"no tier", "question: q?\ncommand: run\n", "in no tier"},
		{"bad command", "question: q?\ncommand: bench\nquick: x\n", "command \"bench\""},
		{"unknown key", ok + "fast: --clients 2\n", "unknown key \"fast\""},
		{"twice", ok + "question: again\n", "question given twice"},
		{"not key value", ok + "just words\n", "want key: value"},
		{"reserved flag", "question: q?\ncommand: run\nargs: --impl redis\nquick: x\n", "--impl is the suite's"},
		{"reserved flag with =", "question: q?\ncommand: run\nstandard: --out=x\n", "--out=x is the suite's"},
		{"reserved flag for a row", ok + "quick redis: --impl x\n", "--impl is the suite's"},
		{"row in a tier not run", ok + "full redis: --ttl 1s\n", "flags for rows in the full tier"},
		{"row in no tier", ok + "fast redis: --ttl 1s\n", "unknown key \"fast redis\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse("w", tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to say %q", err, tc.want)
			}
		})
	}
	w, err := parse("w", "# first line\n# second\nquestion: q?\ncommand: capacity\nargs: --slo p99<=1ms\nfull: --find rate\n")
	if err != nil {
		t.Fatal(err)
	}
	if w.About != "first line second" || w.Command != CommandCapacity || !w.In(Full) || w.In(Quick) {
		t.Errorf("parsed %+v", w)
	}
}

// TestDigestFollowsContent: one byte changed in a workload changes the
// version's digest.
func TestDigestFollowsContent(t *testing.T) {
	file := "question: q?\ncommand: run\nquick: --clients 1\n"
	a, err := load(fstest.MapFS{"vx/a.workload": {Data: []byte(file)}}, "vx")
	if err != nil {
		t.Fatal(err)
	}
	b, err := load(fstest.MapFS{"vx/a.workload": {Data: []byte(strings.Replace(file, "1", "2", 1))}}, "vx")
	if err != nil {
		t.Fatal(err)
	}
	c, err := load(fstest.MapFS{"vx/b.workload": {Data: []byte(file)}}, "vx")
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest == b.Digest || a.Digest == c.Digest {
		t.Errorf("digests %s %s %s: a change of content or of name must change it", a.Digest, b.Digest, c.Digest)
	}
}

func TestParts(t *testing.T) {
	rows := []string{"a", "b", "c", "d", "e", "f", "g"}
	for n := 1; n <= 8; n++ {
		var all []string
		sizes := map[int]bool{}
		for i := range n {
			p, err := ParsePart(Part{i, n}.String())
			if err != nil {
				t.Fatal(err)
			}
			got := p.Rows(rows)
			all = append(all, got...)
			sizes[len(got)] = true
		}
		slices.Sort(all)
		if !slices.Equal(all, rows) {
			t.Errorf("%d parts cover %v, want every row once", n, all)
		}
		if len(sizes) > 2 {
			t.Errorf("%d parts have sizes %v: they differ by more than one", n, sizes)
		}
	}
	if got := (Part{1, 3}).Rows(rows); !slices.Equal(got, []string{"b", "e"}) {
		t.Errorf("part 1/3 = %v, want [b e]", got)
	}
	for _, bad := range []string{"", "1", "3/3", "-1/2", "0/0", "a/b", "1/2/3"} {
		if _, err := ParsePart(bad); !errors.Is(err, ErrSuite) {
			t.Errorf("ParsePart(%q) = %v, want ErrSuite", bad, err)
		}
	}
}

func TestFingerprint(t *testing.T) {
	metas := []result.Meta{
		{Host: map[string]string{"cpu_model": "Xeon", "cpus": "2", "kernel": "6.1"}, ServerVersions: map[string]string{"redis": "7.0.15"},
			ServerProfile: "production", DiskSync: &result.DiskSync{P50Ms: 0.2, P99Ms: 0.5}},
		{Host: map[string]string{"cpu_model": "other", "memory": "24 GB"}, ServerVersions: map[string]string{"redis": "9", "zookeeper": "3.8.0"}},
	}
	f := FingerprintOf(metas)
	if f.CPUModel != "Xeon" || f.Cores != 2 || f.Memory != "24 GB" || f.Servers["redis"] != "7.0.15" || f.Servers["zookeeper"] != "3.8.0" || f.Disk.P50Ms != 0.2 {
		t.Errorf("fingerprint %+v: each fact from the first meta that states it", f)
	}
	g := f
	g.Servers = map[string]string{"redis": "7.2.0", "zookeeper": "3.8.0"}
	g.Disk = &result.DiskSync{P50Ms: 0.3}
	if d := f.Differences(g); !slices.Equal(d, []string{"redis: 7.0.15 | 7.2.0"}) {
		t.Errorf("differences %q: a disk within 2× is no difference", d)
	}
	g.Disk = &result.DiskSync{P50Ms: 2}
	g.Cores = 8
	if d := f.Differences(g); len(d) != 3 || d[0] != "cores: 2 | 8" || !strings.HasPrefix(d[2], "disk fdatasync p50") {
		t.Errorf("differences %q", d)
	}
}

func TestBundleRoundTrip(t *testing.T) {
	dir := t.TempDir()
	b := &Bundle{Schema: BundleSchema, Suite: "v1", Digest: "d", Tier: Standard, Part: "1/2", Rows: []string{"redis"},
		Started:   time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC),
		Workloads: []Run{{Name: "hot", Exit: 0}, {Name: "faults", Exit: 3}, {Name: "herd", Exit: 1, Error: "etcd did not start"}}}
	if err := b.Write(dir); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tier != Standard || got.Part != "1/2" || len(got.Workloads) != 3 || !got.Started.Equal(b.Started) {
		t.Errorf("read back %+v", got)
	}
	// Exit 3 (unsafe found) is a result; exit 1 is a failure.
	if f := got.Failed(); !slices.Equal(f, []string{"herd: etcd did not start"}) {
		t.Errorf("failed %q", f)
	}
}

func TestJoin(t *testing.T) {
	est := func(vs ...float64) *result.Estimate { e := result.EstimateOf(vs); return &e }
	part := func(p string, rows ...string) *Bundle {
		return &Bundle{Suite: "v1", Digest: "d", Tier: Standard, Part: p, Rows: rows,
			Started:   time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC),
			Machine:   Fingerprint{CPUModel: "Xeon", Cores: 2, Servers: map[string]string{"redis": "7.0.15"}},
			Yardstick: &Yardstick{What: "SET/s", Rate: est(40000, 41000)},
			Workloads: []Run{{Name: "hot", Dir: "hot", Exit: 0}, {Name: "faults", Dir: "faults", Exit: 3}}}
	}
	a, b := part("0/2", "etcd", "redis"), part("1/2", "zk-pred")
	b.Workloads[0].Exit, b.Workloads[0].Error = 1, "zookeeper did not start"
	j, err := Join([]*Bundle{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if j.Part != "0/2+1/2" || !slices.Equal(j.Rows, []string{"etcd", "redis", "zk-pred"}) || len(j.Yardstick.Rate.Rounds) != 4 {
		t.Errorf("joined %+v", j)
	}
	hot := j.Workloads[0]
	if !slices.Equal(hot.Sources(), []string{"parts/0/hot", "parts/1/hot"}) || hot.Exit != 1 || hot.Error != "part 1/2: zookeeper did not start" {
		t.Errorf("hot %+v", hot)
	}
	if j.Workloads[1].Exit != 3 {
		t.Errorf("faults exit %d, want 3 (both parts found a violation)", j.Workloads[1].Exit)
	}
	// Two wholes narrowed to other rows join, and the servers of both
	// are in the fingerprint; two wholes with a row in common do not.
	w1, w2 := part("0/1", "redis"), part("0/1", "k8s-lease")
	w2.Machine.Servers = map[string]string{"kube-apiserver": "1.34.2"}
	if w, err := Join([]*Bundle{w1, w2}); err != nil || w.Part != "0/1" || !slices.Equal(w.Rows, []string{"k8s-lease", "redis"}) || len(w.Machine.Servers) != 2 {
		t.Errorf("two wholes: %+v, %v", w, err)
	}
	if w1.Machine.Servers["kube-apiserver"] != "" {
		t.Error("joining changed a part's fingerprint")
	}
	if _, err := Join([]*Bundle{w1, part("0/1", "redis")}); !errors.Is(err, ErrSuite) || !strings.Contains(err.Error(), "row redis is in parts 0 and 1") {
		t.Errorf("two wholes with one row: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*Bundle)
		want string
	}{
		"another machine": {func(b *Bundle) { b.Machine.Cores = 8 }, "another machine than part 0: cores: 2 | 8"},
		"another server":  {func(b *Bundle) { b.Machine.Servers = map[string]string{"redis": "7.2.4"} }, "redis: 7.0.15 | 7.2.4"},
		"another tier":    {func(b *Bundle) { b.Tier = Quick }, "the quick tier"},
		"another suite":   {func(b *Bundle) { b.Digest = "e" }, "ran suite v1 (e)"},
		"the same part":   {func(b *Bundle) { b.Part = "0/2" }, "both part 0/2"},
		"a row twice":     {func(b *Bundle) { b.Rows = []string{"redis"} }, "row redis is in parts 0 and 1"},
	} {
		b := part("1/2", "zk-pred")
		tc.edit(b)
		if _, err := Join([]*Bundle{a, b}); !errors.Is(err, ErrSuite) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrSuite saying %q", name, err, tc.want)
		}
	}
}
