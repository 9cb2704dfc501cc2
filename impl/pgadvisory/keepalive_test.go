package pgadvisory

import (
	"testing"
	"time"
)

func TestPgSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"75": 75 * time.Second, "1s": time.Second, "2h": 2 * time.Hour, "1min": time.Minute, " 7200 ": 2 * time.Hour} {
		if got, err := pgSeconds(in); err != nil || got != want {
			t.Errorf("pgSeconds(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := pgSeconds("soon"); err == nil {
		t.Error(`pgSeconds("soon") took it`)
	}
}
