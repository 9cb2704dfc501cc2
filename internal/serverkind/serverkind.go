// Package serverkind names the kinds of server lockbench knows: the word
// a driver's need says (impl.Need.Kind), the sandbox registers a kind
// under, and the shards' rendezvous meets through; and what a kind's
// counters may mean (Counts), which a cell keeps. It imports nothing, so
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
	// KubeAPIServer is a Kubernetes API server over an etcd of its own.
	KubeAPIServer = "kube-apiserver"
	// NATS is a NATS server with JetStream on.
	NATS = "nats"
)

// KubeToken is the bearer token a sandboxed kube-apiserver accepts (its
// --token-auth-file names it, in group system:masters), and the one
// lockbench's Kubernetes clients send unless $LOCKBENCH_KUBE_TOKEN says
// otherwise. The server listens on loopback only.
const KubeToken = "lockbench-sandbox"
