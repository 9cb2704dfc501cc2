// Package suite is lockbench's standard benchmark: a versioned set of
// named workloads, each a question a user asks of a lock, that every
// registered row runs the same way on every machine, so that two
// people's tables can be set side by side.
//
// A workload is data, as YCSB keeps its workloads A–F: a small file in
// the version's folder (v1/uncontended.workload …) naming the command it
// runs (`lockbench run` or `lockbench capacity`), the flags every tier
// shares, and each tier's own (quick, standard, full). The flags are the
// commands' own and are validated by them, so a workload means exactly
// what its command line says. A version's files are pinned by their
// digest: changing a workload is a new suite version, and a bundle says
// which version made it.
package suite
