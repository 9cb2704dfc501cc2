package dist

import (
	"math/rand/v2"
	"testing"
)

// FuzzParseDist checks what an accepted --hold or --think promises: its
// text reads back as the same distribution, and every draw lies within it
// (never negative, never past MaxDist for a fixed or uniform one).
func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"5ms", "1ms", "60ms", "400ms", "exp:1ms", "exp:2ms", "uniform:1ms-10ms", "0s", "-0s",
		"24h", "24h0m0.000000001s", "exp:24h", "uniform:0s-24h", "uniform:1ms", "uniform:5ms-1ms", "uniform:-1ms-1ms",
		"exp:0s", "exp:x", "-1ms", "five", "gauss:1ms", "", ":", "uniform:", "exp:", "2562047h47m16.854775807s"} {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		d, err := ParseDist(s)
		if err != nil {
			if d != (Dist{}) {
				t.Fatalf("ParseDist(%q) failed (%v) but returned %v", s, err, d)
			}
			return
		}
		back, err := ParseDist(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDist(%q).String() = %q reads back as %v, %v", s, d.String(), back, err)
		}
		if m := d.Mean(); m < 0 || m > MaxDist {
			t.Fatalf("ParseDist(%q): mean %v outside [0, %v]", s, m, MaxDist)
		}
		r := rand.New(rand.NewPCG(seed, seed))
		for range 16 {
			v := d.Sample(r)
			if v < 0 || d.kind != exponential && (v < d.a || v > max(d.a, d.b)) {
				t.Fatalf("ParseDist(%q): sample %v outside the distribution", s, v)
			}
		}
	})
}

// FuzzParseKeys checks what an accepted --dist promises: its text reads
// back as the same key distribution, and a picker over any number of
// names picks one of them.
func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"uniform", "zipf:1.2", "zipf:1.5", "hot:0.2/0.8", "", "zipf:1", "zipf:x", "zipf:NaN",
		"zipf:+Inf", "hot:0.2", "hot:1/0.5", "hot:NaN/0.5", "pareto", "uniform:0.5", "uniform:"} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		k, err := ParseKeys(s)
		if err != nil {
			return
		}
		back, err := ParseKeys(k.String())
		if err != nil || back != k {
			t.Fatalf("ParseKeys(%q).String() = %q reads back as %+v, %v; want %+v", s, k.String(), back, err, k)
		}
		if k.String() != s && s != "" {
			t.Fatalf("ParseKeys(%q) accepted it but names itself %q: part of the flag was ignored", s, k.String())
		}
		if n < 1 || n > 1<<20 {
			return
		}
		p := k.NewPicker(n, rand.New(rand.NewPCG(1, 2)))
		for range 64 {
			if i := p.Pick(); i < 0 || i >= n {
				t.Fatalf("ParseKeys(%q): picked %d of %d names", s, i, n)
			}
		}
	})
}
