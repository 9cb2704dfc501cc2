// Package serverkind names the kinds of server lockbench knows: the word
// a driver's need says (impl.Need.Kind), the sandbox registers a kind
// under, and the shards' rendezvous meets through. It imports nothing, so
// that naming a kind costs a package no dependency on the sandbox that
// starts it.
package serverkind

// The server kinds.
const (
	Redis     = "redis"
	ZooKeeper = "zookeeper"
	Etcd      = "etcd"
	Postgres  = "postgres"
	// MySQL is served by MariaDB.
	MySQL = "mysql"
	// RedisCluster is a Redis Cluster of masters.
	RedisCluster = "redis-cluster"
)
