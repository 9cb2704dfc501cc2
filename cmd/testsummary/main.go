// Command testsummary reads `go test -json` on stdin and writes what a CI
// log needs: each package's closing lines (ok, FAIL, build errors) as go
// test prints them, the whole output of every test that failed, and one
// line per skipped test with its reason — so a run that skipped a server's
// tests cannot pass for one that ran them. With CI set in the environment,
// a skip whose reason is not on the allowed list (allow.go) fails the run.
// It exits 1 if anything failed.
//
//	go test -json ./... | go run ./cmd/testsummary
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	failed, err := summarise(os.Stdin, os.Stdout, os.Getenv("CI") != "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// summarise copies r's events to w as described in the package doc and
// reports whether any test or package failed.
func summarise(r io.Reader, w io.Writer, ci bool) (failed bool, err error) {
	s := newSummary(w, ci)
	if err := s.read(r); err != nil {
		return true, err
	}
	s.close()
	return s.failed, nil
}
