package inproc_test

import (
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	_ "github.com/lockbench/lockbench/impl/inproc"
)

// The in-process lock has no server: no needs, nothing to count on one.
func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("inproc")
	if !ok {
		t.Fatal("driver inproc not registered")
	}
	impltest.Run(t, d, impl.Servers{}, impltest.Options{})
}
