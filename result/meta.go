package result

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Meta is the content of meta.json: what was run, where and with what.
// Run writes it before the first cell; reports read it back, and list
// every key it holds (Fields), so that a key added later shows without a
// change here.
type Meta struct {
	Version   string            `json:"lockbench_version"`
	GoVersion string            `json:"go_version"`
	Started   time.Time         `json:"started"`
	Host      map[string]string `json:"host"`
	Seed      uint64            `json:"seed"`
	Impls     []string          `json:"impls"`
	// Libraries says what each implementation's row measured: the library
	// it calls with the version the binary was built with, or what it is
	// lockbench's own recipe of.
	Libraries map[string]string `json:"libraries,omitempty"`
	Scenarios []string          `json:"scenarios"`
	// ScenarioKinds says how each scenario drives its clients: a fault
	// script runs once, at the first client count (at least 2), not once
	// per count (PlanCells).
	ScenarioKinds map[string]Kind `json:"scenario_kinds,omitempty"`
	Clients       []int           `json:"clients"`
	Locks         int             `json:"locks"`
	DurationS     float64         `json:"duration_s,omitempty"`
	Acquires      int64           `json:"acquires,omitempty"`
	WarmupS       float64         `json:"warmup_s"`
	HoldS         float64         `json:"hold_s"`
	ThinkS        float64         `json:"think_s"`
	// Hold and Think are the distributions, e.g. exp:5ms.
	Hold        string  `json:"hold"`
	Think       string  `json:"think"`
	Keys        string  `json:"keys,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Arrival     string  `json:"arrival,omitempty"`
	MaxInflight int     `json:"max_inflight,omitempty"`
	Repeat      int     `json:"repeat,omitempty"`
	// Ramp is the staircase (START:STEP:EVERY) when the run ramped: then
	// the cells of each implementation and scenario are the stairs of one
	// series, back to back over the same connections.
	Ramp string `json:"ramp,omitempty"`
	// Order says in what order the cells ran; summary.json lists them in
	// the order asked (implementation, scenario, client count) whatever
	// it was. Runs that do not say ran one implementation's cells after
	// another's.
	Order string `json:"order,omitempty"`
	// Renew says holders renewed their lease (a watchdog); AcquireTimeoutS
	// is how long a client waited before giving up (0: until the cell
	// ended). Both change what a cell measures, so they are of the plan.
	Renew           bool    `json:"renew,omitempty"`
	AcquireTimeoutS float64 `json:"acquire_timeout_s,omitempty"`
	// ServerVersions maps "kind address" to what the server says it is.
	ServerVersions map[string]string `json:"server_versions"`
	// SLO, when present, is the latency objective capacity is planned for
	// ("p99=10ms"); an SLO given to a renderer wins.
	SLO     string            `json:"slo,omitempty"`
	TTLS    float64           `json:"ttl_s"`
	RetryS  float64           `json:"retry_s"`
	Options map[string]string `json:"options,omitempty"`
	// Servers maps each server role (an address flag, e.g. "redis") to
	// the addresses used; Sandboxed lists the roles lockbench started.
	Servers   Addrs    `json:"servers"`
	Sandboxed []string `json:"sandboxed,omitempty"`
	// Sizes are the sandbox's sizes per server kind (a ZooKeeper ensemble
	// of 3, say), where not the default.
	Sizes map[string]int `json:"sandbox_sizes,omitempty"`
	// ServerProfile is how the sandbox configured its servers
	// ("production", as their distributions ship them, or "fast"), and
	// ServerSettings what that meant for each kind it started. Empty in
	// runs from before profiles, which ran the fast settings.
	ServerProfile  string          `json:"server_profile,omitempty"`
	ServerSettings []ServerSetting `json:"server_settings,omitempty"`
	// DiskSync is the synced-write latency of the sandbox's data
	// directory, measured before the first cell.
	DiskSync *DiskSync `json:"disk_fdatasync,omitempty"`
	// ServerWarmup is the warm-up each server kind got before the first
	// measured cell; none in the fast profile.
	ServerWarmup []ServerWarmup `json:"server_warmup,omitempty"`
	// PlanHash identifies what was run (implementations, scenarios,
	// clients, every setting), not where or when: shards of one run share
	// it, and merge refuses shards that do not.
	PlanHash string `json:"plan_hash,omitempty"`
	// Shard is set in the results of one shard of a sharded run.
	Shard *ShardMeta `json:"shard,omitempty"`
	// Shards lists, in a merged run, each shard's meta as it was written.
	Shards []ShardMeta `json:"shards,omitempty"`
	// Partial is set, as in summary.json, by a merge given --partial.
	Partial *Partial `json:"partial,omitempty"`

	// Fields lists every key of the file as read, flattened and sorted,
	// for a configuration table.
	Fields []Field `json:"-"`
}

// Field is one flattened key of meta.json and its value as text.
type Field struct{ Key, Value string }

// ReadMeta reads a meta.json.
func ReadMeta(path string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("result: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("result: %s: %w", path, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return m, fmt.Errorf("result: %s: %w", path, err)
	}
	m.Fields = flattenJSON("", raw)
	return m, nil
}

// flattenJSON lists a decoded JSON value as dotted keys and plain values,
// sorted by key, leaving out empty values.
func flattenJSON(prefix string, v any) []Field {
	var out []Field
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			out = append(out, flattenJSON(key, x)...)
		}
		slices.SortFunc(out, func(a, b Field) int { return strings.Compare(a.Key, b.Key) })
	case []any:
		parts := make([]string, 0, len(v))
		for _, x := range v {
			b, _ := json.Marshal(x)
			parts = append(parts, strings.Trim(string(b), `"`))
		}
		if len(parts) > 0 {
			out = append(out, Field{prefix, strings.Join(parts, ", ")})
		}
	case nil:
	case string:
		if v != "" {
			out = append(out, Field{prefix, v})
		}
	default:
		b, _ := json.Marshal(v)
		out = append(out, Field{prefix, string(b)})
	}
	return out
}

// Describe is a one-line account of where and when the run happened.
func (m Meta) Describe() string {
	var parts []string
	if !m.Started.IsZero() {
		parts = append(parts, "run "+m.Started.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if m.Version != "" {
		parts = append(parts, "lockbench "+m.Version)
	}
	if m.GoVersion != "" {
		parts = append(parts, m.GoVersion)
	}
	if m.Host["os"] != "" {
		parts = append(parts, m.Host["os"]+"/"+m.Host["arch"])
	}
	if m.Host["cpus"] != "" {
		parts = append(parts, m.Host["cpus"]+" CPUs")
	}
	if m.ServerProfile != "" {
		parts = append(parts, m.ServerProfile+" servers")
	}
	return strings.Join(parts, ", ")
}

// Addrs maps server roles to addresses. It reads meta.json of either
// form: a list per role, or (schema 1) a single address.
type Addrs map[string][]string

// UnmarshalJSON reads a role's addresses as a list or a single string.
func (a *Addrs) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*a = Addrs{}
	for role, v := range raw {
		var list []string
		if err := json.Unmarshal(v, &list); err != nil {
			var one string
			if err := json.Unmarshal(v, &one); err != nil {
				return fmt.Errorf("servers.%s: %w", role, err)
			}
			if one != "" {
				list = []string{one}
			}
		}
		(*a)[role] = list
	}
	return nil
}
