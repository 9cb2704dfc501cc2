//go:build !linux

package engine

import (
	"time"

	"github.com/lockbench/lockbench/result"
)

// MachineCPU is not read here.
func MachineCPU() (time.Duration, bool) { return 0, false }

// wakeProbe is not run here.
type wakeProbe struct{}

// StopWakeProbe has no probe to stop here.
func StopWakeProbe() {}

func readyWakeProbe()                                       {}
func startWakeProbe() *wakeProbe                            { return &wakeProbe{} }
func (*wakeProbe) finish() (*result.Latency, time.Duration) { return nil, 0 }
