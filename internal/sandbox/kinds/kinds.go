// Package kinds registers every server kind lockbench can start, one line
// a kind: importing it (for its side effect) is what makes a kind known to
// the sandbox, `lockbench sandbox`, the install step and the cells'
// counters. A new kind is a folder beside these and a line here, as a
// driver is a folder under impl/ and a line in impl/all.
package kinds

import (
	_ "github.com/lockbench/lockbench/internal/sandbox/etcd"
	_ "github.com/lockbench/lockbench/internal/sandbox/kubeapiserver"
	_ "github.com/lockbench/lockbench/internal/sandbox/mysql"
	_ "github.com/lockbench/lockbench/internal/sandbox/nats"
	_ "github.com/lockbench/lockbench/internal/sandbox/postgres"
	_ "github.com/lockbench/lockbench/internal/sandbox/redis"
	_ "github.com/lockbench/lockbench/internal/sandbox/rediscluster"
	_ "github.com/lockbench/lockbench/internal/sandbox/zookeeper"
)
