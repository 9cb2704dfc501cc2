//go:build !linux

package engine

import "time"

// preciseSleep sleeps on a Go timer where no kernel sleep is wired up.
func preciseSleep(d time.Duration) { time.Sleep(d) }
