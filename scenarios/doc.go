// Package scenarios holds what shapes a scenario's load: distributions of
// hold and think times (Dist) and of which lock each acquisition picks
// (Keys). The scenarios themselves — hot, keys, burst, rate and the fault
// scenarios — register with the engine (package engine), one type each.
package scenarios
