package suite

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/result"
)

// BundleFile is a bundle's own file, at its root; each workload's results
// directory is a folder beside it, named for the workload.
const BundleFile = "suite.json"

// BundleSchema is suite.json's schema version.
const BundleSchema = 1

// Bundle is what a suite run leaves: which suite, tier and part ran, on
// which machine and servers, and where each workload's results are. The
// figures themselves are in each workload's results directory
// (summary.json, with their intervals), which every other lockbench
// command reads as it reads any run's.
type Bundle struct {
	Schema    int       `json:"schema"`
	Suite     string    `json:"suite"`
	Digest    string    `json:"suite_digest"`
	Tier      Tier      `json:"tier"`
	Part      string    `json:"part"`
	Lockbench string    `json:"lockbench_version"`
	Rows      []string  `json:"rows"`
	Started   time.Time `json:"started"`
	Ended     time.Time `json:"ended,omitzero"`
	// Machine is the fingerprint of where it ran, taken from the
	// workloads' own meta.json (the first that has each fact).
	Machine Fingerprint `json:"machine"`
	// Yardstick is the machine's speed, measured beside the workloads.
	Yardstick *Yardstick `json:"yardstick,omitempty"`
	Workloads []Run      `json:"workloads"`
}

// Yardstick is a fixed measure of the machine's speed taken in rounds
// between a bundle's workloads (redis-benchmark's SET rate): machines
// drift by ±20 % over minutes, and a comparison of two bundles judges
// their figures against how far the yardstick moved.
type Yardstick struct {
	// What says what was measured, in its unit.
	What string           `json:"what"`
	Rate *result.Estimate `json:"rate,omitempty"`
	// Note says why there is no rate, or why it stopped early.
	Note string `json:"note,omitempty"`
}

// Run is one workload as a bundle ran it.
type Run struct {
	Name     string   `json:"name"`
	Question string   `json:"question"`
	Command  string   `json:"command"`
	Args     []string `json:"args"`
	// Dir is the workload's results directory, relative to the bundle;
	// in a bundle joined from parts, Dirs are the parts' (Dir empty).
	Dir  string   `json:"dir,omitempty"`
	Dirs []string `json:"dirs,omitempty"`
	// Exit is the command's exit status: 0, 3 (a mutual-exclusion
	// violation found — a result, not a failure of the suite), 5 (an SLO
	// missed), 1 (it failed; Error says why).
	Exit    int     `json:"exit"`
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Fingerprint is what a table's figures depend on besides the locks:
// the machine, its disk, the servers' versions and settings profile.
// Two bundles' figures compare only as far as their fingerprints agree.
type Fingerprint struct {
	CPUModel string `json:"cpu_model,omitempty"`
	Cores    int    `json:"cores,omitempty"`
	Memory   string `json:"memory,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	OS       string `json:"os,omitempty"`
	Arch     string `json:"arch,omitempty"`
	Go       string `json:"go_version,omitempty"`
	// Profile is the servers' profile (production or fast), Servers their
	// versions by kind.
	Profile string            `json:"server_profile,omitempty"`
	Servers map[string]string `json:"server_versions,omitempty"`
	// Disk is the synced-write latency of the sandbox's data directory.
	Disk *result.DiskSync `json:"disk_fdatasync,omitempty"`
}

// FingerprintOf gathers a fingerprint from runs' meta.json files: each
// fact from the first meta that states it, the servers from all.
func FingerprintOf(metas []result.Meta) Fingerprint {
	var f Fingerprint
	for _, m := range metas {
		h := m.Host
		f.CPUModel = first(f.CPUModel, h["cpu_model"])
		if f.Cores == 0 {
			f.Cores, _ = strconv.Atoi(h["cpus"])
		}
		f.Memory = first(f.Memory, h["memory"])
		f.Kernel = first(f.Kernel, h["kernel"])
		f.OS = first(f.OS, h["os"])
		f.Arch = first(f.Arch, h["arch"])
		f.Go = first(f.Go, m.GoVersion)
		f.Profile = first(f.Profile, m.ServerProfile)
		// meta.json keys a version by role and address ("redis
		// 127.0.0.1:6379"); the address changes every run.
		for k, v := range m.ServerVersions {
			if f.Servers == nil {
				f.Servers = map[string]string{}
			}
			role, _, _ := strings.Cut(k, " ")
			if _, ok := f.Servers[role]; !ok {
				f.Servers[role] = v
			}
		}
		if f.Disk == nil {
			f.Disk = m.DiskSync
		}
	}
	return f
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Differences names each fact two fingerprints state differently, as
// "cpu_model: A | B"; a server only one of them ran is none (their rows
// differ), and the disk's latency is left out, as it moves on every run
// (a disk that changed by more than twice is named).
func (f Fingerprint) Differences(o Fingerprint) []string {
	var out []string
	diff := func(name, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s | %s", name, a, b))
		}
	}
	diff("cpu_model", f.CPUModel, o.CPUModel)
	diff("cores", strconv.Itoa(f.Cores), strconv.Itoa(o.Cores))
	diff("memory", f.Memory, o.Memory)
	diff("kernel", f.Kernel, o.Kernel)
	diff("os/arch", f.OS+"/"+f.Arch, o.OS+"/"+o.Arch)
	diff("server_profile", f.Profile, o.Profile)
	for _, k := range slices.Sorted(maps.Keys(f.Servers)) {
		if v, ok := o.Servers[k]; ok {
			diff(k, f.Servers[k], v)
		}
	}
	if f.Disk != nil && o.Disk != nil && f.Disk.P50Ms > 0 && o.Disk.P50Ms > 0 {
		if r := f.Disk.P50Ms / o.Disk.P50Ms; r > 2 || r < 0.5 {
			out = append(out, fmt.Sprintf("disk fdatasync p50: %.2f ms | %.2f ms", f.Disk.P50Ms, o.Disk.P50Ms))
		}
	}
	return out
}

// Write writes the bundle's suite.json into dir, atomically.
func (b *Bundle) Write(dir string) error {
	return result.WriteJSON(filepath.Join(dir, BundleFile), b)
}

// ReadBundle reads dir's suite.json.
func ReadBundle(dir string) (*Bundle, error) {
	raw, err := os.ReadFile(filepath.Join(dir, BundleFile))
	if err != nil {
		return nil, err
	}
	var b Bundle
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, BundleFile), err)
	}
	if b.Schema > BundleSchema {
		return nil, fmt.Errorf("%s: schema %d is newer than this lockbench reads (%d)", filepath.Join(dir, BundleFile), b.Schema, BundleSchema)
	}
	return &b, nil
}

// Failed lists the workloads that did not complete (exit 1 or worse than
// the findings 3 and 5).
func (b *Bundle) Failed() []string {
	var out []string
	for _, r := range b.Workloads {
		if r.Exit != 0 && r.Exit != 3 && r.Exit != 5 {
			out = append(out, r.Name+": "+strings.TrimSpace(r.Error))
		}
	}
	return out
}

// Sources is the workload's results directories, relative to the bundle.
func (r Run) Sources() []string {
	if len(r.Dirs) > 0 {
		return r.Dirs
	}
	return []string{r.Dir}
}
