// Command etcd is the etcd server, built from its Go module so that the
// sandbox can start a current etcd on a machine with only Go installed
// (Debian's etcd-server is years behind). It lives in a module of its own,
// lockbench.local/tools/etcd, so that the server's dependencies stay out of
// lockbench's go.mod. scripts/install-servers builds it:
//
//	cd tools/etcd && go build -o "$HOME/.cache/lockbench/bin/etcd" .
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
