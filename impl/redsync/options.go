package redsync

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/go-redsync/redsync/v4"

	"github.com/lockbench/lockbench/impl"
)

// Module is the library the redsync row calls.
const Module = "github.com/go-redsync/redsync/v4"

// redsync's own defaults, as redsync.NewMutex sets them (redsync.go of
// the release in go.mod; a test checks them against a Mutex it builds).
// Each flag below starts at one of them, and a flag left at its default
// passes no option to redsync, so that the row runs NewMutex(name) as
// redsync's README shows.
const (
	DefaultTries         = 32
	DefaultRetryDelay    = "50ms-250ms" // uniform, whole milliseconds
	DefaultExpiry        = 8 * time.Second
	DefaultDriftFactor   = 0.01
	DefaultTimeoutFactor = 0.05
)

// Options of the redsync row, named after redsync's own (WithTries,
// WithRetryDelay, WithExpiry, WithDriftFactor, WithTimeoutFactor).
var (
	TriesOption = impl.IntOption("redsync-tries", DefaultTries, 1, 1<<30,
		"redsync: WithTries, tries before LockContext gives up (redsync's default 32)")
	RetryDelayOption = impl.Option{Name: "redsync-retry-delay", Default: DefaultRetryDelay,
		Usage: "redsync: pause between tries, D or MIN-MAX drawn uniformly (redsync's default 50ms-250ms)",
		Check: func(v string) error { _, _, err := parseDelay(v); return err }}
	ExpiryOption = impl.DurationOption("redsync-expiry", DefaultExpiry, time.Millisecond,
		"redsync: WithExpiry, the keys' TTL (redsync's default 8s; --ttl does not apply to redsync)")
	DriftFactorOption = floatOption("redsync-drift-factor", DefaultDriftFactor,
		"redsync: WithDriftFactor, clock drift allowed as a fraction of the expiry (redsync's default 0.01)")
	TimeoutFactorOption = floatOption("redsync-timeout-factor", DefaultTimeoutFactor,
		"redsync: WithTimeoutFactor, bound on each master's reply as a fraction of the expiry (redsync's default 0.05)")
)

// options lists every option of the row.
var options = []impl.Option{TriesOption, RetryDelayOption, ExpiryOption, DriftFactorOption, TimeoutFactorOption}

func floatOption(name string, def float64, usage string) impl.Option {
	return impl.Option{Name: name, Default: strconv.FormatFloat(def, 'g', -1, 64), Usage: usage,
		Check: func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f >= 1 {
				return fmt.Errorf("want a fraction from 0 to below 1; got %q", v)
			}
			return nil
		}}
}

func float(cfg impl.Config, o impl.Option) float64 {
	f, err := strconv.ParseFloat(cfg.Option(o), 64)
	if err != nil {
		f, _ = strconv.ParseFloat(o.Default, 64)
	}
	return f
}

// parseDelay reads "D" or "MIN-MAX".
func parseDelay(v string) (lo, hi time.Duration, err error) {
	a, b, span := strings.Cut(v, "-")
	if lo, err = time.ParseDuration(a); err == nil && span {
		hi, err = time.ParseDuration(b)
	} else if err == nil {
		hi = lo
	}
	if err != nil || lo < 0 || hi < lo {
		return 0, 0, fmt.Errorf("want a duration or MIN-MAX, e.g. %s; got %q", DefaultRetryDelay, v)
	}
	return lo, hi, nil
}

// settings are the row's values of the options.
type settings struct {
	tries                int
	delayLo, delayHi     time.Duration
	expiry               time.Duration
	drift, timeoutFactor float64
	changed              []redsync.Option // only what differs from redsync's defaults
	changedNames         []string
}

func readSettings(cfg impl.Config) settings {
	s := settings{tries: cfg.Int(TriesOption), expiry: cfg.Duration(ExpiryOption),
		drift: float(cfg, DriftFactorOption), timeoutFactor: float(cfg, TimeoutFactorOption)}
	s.delayLo, s.delayHi, _ = parseDelay(cfg.Option(RetryDelayOption))
	if s.tries != DefaultTries {
		s.changed, s.changedNames = append(s.changed, redsync.WithTries(s.tries)), append(s.changedNames, TriesOption.Name)
	}
	if s.expiry != DefaultExpiry {
		s.changed, s.changedNames = append(s.changed, redsync.WithExpiry(s.expiry)), append(s.changedNames, ExpiryOption.Name)
	}
	if s.drift != DefaultDriftFactor {
		s.changed, s.changedNames = append(s.changed, redsync.WithDriftFactor(s.drift)), append(s.changedNames, DriftFactorOption.Name)
	}
	if s.timeoutFactor != DefaultTimeoutFactor {
		s.changed = append(s.changed, redsync.WithTimeoutFactor(s.timeoutFactor))
		s.changedNames = append(s.changedNames, TimeoutFactorOption.Name)
	}
	return s
}

// delay draws a pause between tries as redsync's default does: whole
// milliseconds, uniform from delayLo up to (not including) delayHi.
func (s settings) delay(r *rand.Rand) time.Duration {
	lo, hi := s.delayLo/time.Millisecond, s.delayHi/time.Millisecond
	if hi <= lo {
		return s.delayLo
	}
	return (lo + time.Duration(r.Int64N(int64(hi-lo)))) * time.Millisecond
}
