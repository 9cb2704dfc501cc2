// Command lockbench benchmarks distributed locks; see `lockbench help`.
package main

import (
	"os"

	"github.com/lockbench/lockbench/cmd/lockbench/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
