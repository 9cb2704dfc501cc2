package result

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSLOThresholds(t *testing.T) {
	for _, tc := range []struct {
		in        string
		quantile  string
		limit     time.Duration
		canonical string
	}{
		{"p99<=5ms", "p99", 5 * time.Millisecond, "p99<=5ms"},
		{"p99=10ms", "p99", 10 * time.Millisecond, "p99<=10ms"},
		{"p99<=5ms, errors<=0.1%", "p99", 5 * time.Millisecond, "p99<=5ms,errors<=0.1%"},
		{"errors<3,P99.99<=20ms,acq/s>=1000", "p9999", 20 * time.Millisecond, "p99.99<=20ms,errors<3,acq/s>=1000"},
		{"p99.9<2ms,p50<=1ms", "p50", time.Millisecond, "p50<=1ms,p99.9<2ms"},
	} {
		slo, err := ParseSLO(tc.in)
		if err != nil {
			t.Errorf("ParseSLO(%q): %v", tc.in, err)
			continue
		}
		if slo.Quantile != tc.quantile || slo.Limit != tc.limit || slo.String() != tc.canonical {
			t.Errorf("ParseSLO(%q) = %s %v %q, want %s %v %q", tc.in, slo.Quantile, slo.Limit, slo.String(), tc.quantile, tc.limit, tc.canonical)
		}
		if again, err := ParseSLO(slo.String()); err != nil || again != slo {
			t.Errorf("ParseSLO(%q) = %v, %v; want it back as it was", slo.String(), again, err)
		}
	}
	for _, bad := range []string{"", "errors<=1%", "p99>=5ms", "p99<=5", "errors<=200%", "acq/s<=5", "p97<=1ms", "p99<=5ms,,errors<=1%"} {
		if _, err := ParseSLO(bad); !errors.Is(err, ErrSLO) {
			t.Errorf("ParseSLO(%q) error = %v, want ErrSLO", bad, err)
		}
	}
}

// A bad SLO's message is one clean line for a flag to carry: the
// threshold at fault once, no package prefix; an SLO of errors alone
// says how to check only errors, and that way parses.
func TestSLOErrorsReadCleanly(t *testing.T) {
	for in, want := range map[string]string{
		"p99<=banana":        `bad SLO "p99<=banana": want p99<=DURATION`,
		"p99<=1ms,errors<=x": `bad SLO "errors<=x": want errors<=0.1%`,
		"errors<=0":          `(to check only those, add a loose one: 'errors<=0,max<=1h')`,
	} {
		_, err := ParseSLO(in)
		if err == nil || !errors.Is(err, ErrSLO) || !strings.Contains(err.Error(), want) ||
			strings.HasPrefix(err.Error(), "result:") || strings.Count(err.Error(), `"`+in+`"`) > 1 {
			t.Errorf("ParseSLO(%q): %v; want one line with %q", in, err, want)
		}
	}
	if _, err := ParseSLO("errors<=0,max<=1h"); err != nil {
		t.Errorf("the loose form the message suggests: %v", err)
	}
}
