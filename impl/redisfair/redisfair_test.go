package redisfair_test

import (
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/sandboxtest"
)

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("redis-fair")
	if !ok {
		t.Fatal("driver redis-fair not registered")
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{})
}
