// Package hlog writes and reads a cell's HdrHistogram interval log (.hlog,
// one histogram per tag a second, written as the cell runs under a
// .partial name and renamed when whole), and reads it back whole
// (CellLog) or as a digest that keeps no interval histogram (Digest), so
// that rendering a long run does not grow with its length.
package hlog
