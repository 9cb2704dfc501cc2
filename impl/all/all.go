// Package all registers every implementation. Import it for its side
// effect: cmd/lockbench and the root benchmarks do. The fault scenarios
// are not drivers and register from where the program is assembled
// (cmd/lockbench/cli imports package faults).
package all

import (
	_ "github.com/lockbench/lockbench/impl/etcdmutex"
	_ "github.com/lockbench/lockbench/impl/inproc"
	_ "github.com/lockbench/lockbench/impl/mysqlgetlock"
	_ "github.com/lockbench/lockbench/impl/natskv"
	_ "github.com/lockbench/lockbench/impl/pgadvisory"
	_ "github.com/lockbench/lockbench/impl/redis"
	_ "github.com/lockbench/lockbench/impl/redisfair"
	_ "github.com/lockbench/lockbench/impl/redispubsub"
	_ "github.com/lockbench/lockbench/impl/redlock"
	_ "github.com/lockbench/lockbench/impl/redsync"
	_ "github.com/lockbench/lockbench/impl/rueidislock"
	_ "github.com/lockbench/lockbench/impl/zk"
	_ "github.com/lockbench/lockbench/impl/zkephemeral"
	_ "github.com/lockbench/lockbench/impl/zklock"
)
