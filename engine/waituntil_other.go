//go:build !linux

package engine

import (
	"context"
	"time"
)

// alarm is not wired up here: clients wait on their timers.
type alarm struct{}

func newAlarm(context.Context, time.Duration) *alarm { return nil }
func (*alarm) sleep(time.Duration) bool              { return true }
func (*alarm) wakeBefore(time.Time) bool             { return true }
func (*alarm) close()                                {}

func spinAllowance(float64) time.Duration { return 0 }
