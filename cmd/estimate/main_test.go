package main

import (
	"bytes"
	"testing"
)

func TestRunPrintsTheEstimate(t *testing.T) {
	var b bytes.Buffer
	if err := run([]string{"1", "2", "3", "4", "5", "6"}, &b); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "3.5 1 6 median, order statistics\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if err := run([]string{"x"}, &b); err == nil {
		t.Fatal("a word is not a number")
	}
}
