// Package judge decides what a run's results say. It takes result cells
// and returns typed findings with their numbers — safety, the herd's cost
// per hand-off, throughput, the hand-off gap, the best client count tried
// against an SLO, the open loop, each fault, and which side was the limit
// — and nothing else: no sentence is built here. Package report renders
// findings as tables, text and HTML; the CLI prints what report renders.
// A threshold that turns a figure into good or bad is stated once, here.
package judge
