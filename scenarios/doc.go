// Package scenarios will hold lockbench's load shapes, how a cell's
// clients are driven, beside the distributions of scenarios/dist that
// shape their hold, think and key choices.
package scenarios
