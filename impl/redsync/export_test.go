package redsync

import (
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// Changed names the options cfg passes to redsync beyond its defaults.
func Changed(cfg impl.Config) []string { return readSettings(cfg).changedNames }

// Delay draws one pause between tries under cfg.
func Delay(cfg impl.Config, r *rand.Rand) time.Duration { return readSettings(cfg).delay(r) }
