package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Dist is a distribution of durations for hold and think times: fixed
// ("5ms"), exponential with a mean ("exp:5ms") or uniform over a range
// ("uniform:1ms-10ms"). The zero Dist is fixed at 0.
type Dist struct {
	kind   distKind
	a, b   time.Duration
	source string
}

type distKind int

const (
	fixed distKind = iota
	exponential
	uniform
)

// Fixed returns the distribution that is always d.
func Fixed(d time.Duration) Dist { return Dist{kind: fixed, a: d, source: d.String()} }

// MaxDist bounds every duration a distribution is given: a hold or think
// time beyond a day is a typo, and bounding it keeps every draw from
// overflowing.
const MaxDist = 24 * time.Hour

// ParseDist reads "5ms", "exp:5ms" or "uniform:1ms-10ms", each duration at
// most MaxDist.
func ParseDist(s string) (Dist, error) {
	d, err := parseDist(s)
	if err == nil && (d.a > MaxDist || d.b > MaxDist) {
		return Dist{}, fmt.Errorf("%q: durations are at most %v", s, MaxDist)
	}
	return d, err
}

func parseDist(s string) (Dist, error) {
	kind, arg, ok := strings.Cut(s, ":")
	if !ok {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return Dist{}, fmt.Errorf("%q is not a duration, exp:MEAN or uniform:MIN-MAX", s)
		}
		return Fixed(d), nil
	}
	switch kind {
	case "exp":
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return Dist{}, fmt.Errorf("%q: exp needs a positive mean, e.g. exp:5ms", s)
		}
		return Dist{kind: exponential, a: d, source: s}, nil
	case "uniform":
		lo, hi, ok := strings.Cut(arg, "-")
		a, err1 := time.ParseDuration(lo)
		b, err2 := time.ParseDuration(hi)
		if !ok || err1 != nil || err2 != nil || a < 0 || b < a {
			return Dist{}, fmt.Errorf("%q: uniform needs MIN-MAX with 0 ≤ MIN ≤ MAX, e.g. uniform:1ms-10ms", s)
		}
		return Dist{kind: uniform, a: a, b: b, source: s}, nil
	}
	return Dist{}, fmt.Errorf("%q: unknown distribution %q (fixed, exp, uniform)", s, kind)
}

// Sample draws one duration. It allocates nothing.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	switch d.kind {
	case exponential:
		return time.Duration(r.ExpFloat64() * float64(d.a))
	case uniform:
		return d.a + time.Duration(r.Int64N(int64(d.b-d.a)+1))
	}
	return d.a
}

// Mean is the distribution's mean.
func (d Dist) Mean() time.Duration {
	if d.kind == uniform {
		return (d.a + d.b) / 2
	}
	return d.a
}

// IsZero reports whether d is always 0.
func (d Dist) IsZero() bool { return d.kind == fixed && d.a == 0 }

func (d Dist) String() string {
	if d.source == "" {
		return d.a.String()
	}
	return d.source
}

// Keys chooses which of K lock names each acquisition goes to: uniformly,
// by a Zipf law with exponent S ("zipf:1.2"), or with fraction P of
// acquisitions going to fraction F of the names ("hot:0.2/0.8").
type Keys struct {
	kind   keyKind
	s      float64 // zipf exponent
	f, p   float64 // hot: fraction of names, fraction of acquires
	source string
}

type keyKind int

const (
	keysUniform keyKind = iota
	keysZipf
	keysHot
)

// ParseKeys reads "uniform", "zipf:S" (S > 1) or "hot:F/P" (0 < F, P < 1).
func ParseKeys(s string) (Keys, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch kind {
	case "uniform", "":
		if hasArg {
			// uniform:0.5 would run uniform and say nothing of the 0.5.
			return Keys{}, fmt.Errorf("%q: uniform takes no argument", s)
		}
		return Keys{source: "uniform"}, nil
	case "zipf":
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(v > 1) || math.IsInf(v, 0) {
			return Keys{}, fmt.Errorf("%q: zipf needs a finite exponent > 1, e.g. zipf:1.2", s)
		}
		return Keys{kind: keysZipf, s: v, source: s}, nil
	case "hot":
		fs, ps, ok := strings.Cut(arg, "/")
		f, err1 := strconv.ParseFloat(fs, 64)
		p, err2 := strconv.ParseFloat(ps, 64)
		if !ok || err1 != nil || err2 != nil || !(f > 0 && f < 1 && p > 0 && p < 1) {
			return Keys{}, fmt.Errorf("%q: hot needs F/P with fractions in (0,1), e.g. hot:0.2/0.8", s)
		}
		return Keys{kind: keysHot, f: f, p: p, source: s}, nil
	}
	return Keys{}, fmt.Errorf("%q: unknown key distribution (uniform, zipf:S, hot:F/P)", s)
}

func (k Keys) String() string {
	if k.source == "" {
		return "uniform"
	}
	return k.source
}

// Picker draws lock indexes in [0, n) for one client. Make one per client:
// it is not safe for concurrent use.
type Picker struct {
	k    Keys
	n    int
	r    *rand.Rand
	zipf *rand.Zipf
	hotN int
}

// NewPicker returns a picker over n names drawing from r.
func (k Keys) NewPicker(n int, r *rand.Rand) *Picker {
	p := &Picker{k: k, n: n, r: r}
	switch k.kind {
	case keysZipf:
		if n > 1 {
			p.zipf = rand.NewZipf(r, k.s, 1, uint64(n-1))
		}
	case keysHot:
		p.hotN = max(1, int(math.Ceil(k.f*float64(n))))
	}
	return p
}

// Pick returns the next lock index. It allocates nothing.
func (p *Picker) Pick() int {
	if p.n <= 1 {
		return 0
	}
	switch p.k.kind {
	case keysZipf:
		return int(p.zipf.Uint64())
	case keysHot:
		if p.hotN >= p.n {
			return p.r.IntN(p.n)
		}
		if p.r.Float64() < p.k.p {
			return p.r.IntN(p.hotN)
		}
		return p.hotN + p.r.IntN(p.n-p.hotN)
	}
	return p.r.IntN(p.n)
}
