// Package scenarios holds lockbench's load shapes, one file each: hot (a
// closed loop), keys (the closed loop over drawn lock names), burst (the
// herd), abandon (a queue whose waiters give up) and rate (the open loop).
// Each registers with the engine and makes a shape per cell that owns that
// cell's state; the engine runs it. Importing the package registers them.
// The distributions that shape hold, think and key choices are package
// dist's, a leaf the engine samples too.
package scenarios
