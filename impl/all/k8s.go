//go:build !lockbench_no_k8s

package all

// The Kubernetes Lease row brings client-go and some 475 packages with it.
// The tag lockbench_no_k8s leaves it out of a build that needs no Lease:
// scripts/test's fuzzing, which compiles every dependency of a target
// instrumented, and whose targets parse flags, not Leases.
import _ "github.com/lockbench/lockbench/impl/k8slease"
