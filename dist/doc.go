// Package dist holds the distributions that shape a scenario's load: of
// hold and think times (Dist) and of which lock each acquisition picks
// (Keys). It imports nothing of lockbench, so that the engine, which
// samples them, and the scenarios, which run on the engine, can share it.
package dist
