package mysqlgetlock_test

import (
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	_ "github.com/lockbench/lockbench/impl/mysqlgetlock"
	"github.com/lockbench/lockbench/sandboxtest"
)

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("mysql-getlock")
	if !ok {
		t.Fatal("mysql-getlock is not registered")
	}
	servers := sandboxtest.Start(t, d.Needs...)
	impltest.Run(t, d, servers, impltest.Options{})
}

// The guarded register on MariaDB keeps the rules every server kind's
// must.
func TestGuard(t *testing.T) {
	d, _ := impl.Lookup("mysql-getlock")
	servers := sandboxtest.Start(t, d.Needs...)
	impltest.Register(t, d.Needs[0].Guard, servers[d.Needs[0].Role])
}
