//go:build !unix

package plan

// fdLimit is the number of files this process may open, 0 if unknown.
func fdLimit() int { return 0 }
