package dist

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestParseDistAndSample(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string]struct{ mean, lo, hi time.Duration }{
		"5ms":              {5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond},
		"exp:2ms":          {2 * time.Millisecond, 0, time.Hour},
		"uniform:1ms-10ms": {5500 * time.Microsecond, time.Millisecond, 10 * time.Millisecond},
	}
	for in, want := range cases {
		d, err := ParseDist(in)
		if err != nil {
			t.Fatal(err)
		}
		if d.String() != in || d.Mean() != want.mean {
			t.Errorf("%s: string %q mean %v", in, d, d.Mean())
		}
		var sum time.Duration
		const n = 20000
		for range n {
			s := d.Sample(r)
			if s < want.lo || s > want.hi {
				t.Fatalf("%s: sample %v outside [%v, %v]", in, s, want.lo, want.hi)
			}
			sum += s
		}
		if got := sum / n; math.Abs(float64(got-want.mean)) > 0.05*float64(want.mean) {
			t.Errorf("%s: sample mean %v, want ≈ %v", in, got, want.mean)
		}
	}
	for _, bad := range []string{"-1ms", "exp:0s", "exp:x", "uniform:5ms-1ms", "uniform:1ms", "gauss:1ms", "five"} {
		if _, err := ParseDist(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestKeysShareAcquisitions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, draws = 10, 100000
	count := func(spec string) []int {
		k, err := ParseKeys(spec)
		if err != nil {
			t.Fatal(err)
		}
		p := k.NewPicker(n, r)
		c := make([]int, n)
		for range draws {
			i := p.Pick()
			if i < 0 || i >= n {
				t.Fatalf("%s picked %d of %d", spec, i, n)
			}
			c[i]++
		}
		return c
	}
	u := count("uniform")
	for i, c := range u {
		if math.Abs(float64(c)-draws/n) > 0.05*draws/n {
			t.Errorf("uniform: name %d got %d of %d", i, c, draws)
		}
	}
	h := count("hot:0.2/0.8") // names 0 and 1 get 80 %
	if hot := h[0] + h[1]; math.Abs(float64(hot)/draws-0.8) > 0.01 {
		t.Errorf("hot:0.2/0.8: the hot fifth got %.3f of acquisitions", float64(hot)/draws)
	}
	z := count("zipf:1.5")
	for i := 1; i < n; i++ {
		if z[i] > z[i-1] {
			t.Errorf("zipf: name %d (%d) drawn more than name %d (%d)", i, z[i], i-1, z[i-1])
		}
	}
	for _, bad := range []string{"zipf:1", "zipf:x", "hot:0.2", "hot:1/0.5", "pareto"} {
		if _, err := ParseKeys(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
