package report

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// runMeta is the part of meta.json (lockbench.Meta, which this package
// cannot import) that reports use by name; Fields keeps every key for the
// configuration table, flattened.
type runMeta struct {
	Version   string            `json:"lockbench_version"`
	GoVersion string            `json:"go_version"`
	Started   time.Time         `json:"started"`
	Host      map[string]string `json:"host"`
	// SLO, when present, is the latency objective capacity is planned for
	// ("p99=10ms"); a --slo given to Render wins.
	SLO string `json:"slo,omitempty"`

	Fields []metaField `json:"-"`
}

type metaField struct{ Key, Value string }

func readMeta(path string) (runMeta, error) {
	var m runMeta
	b, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("report: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("report: %s: %w", path, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return m, fmt.Errorf("report: %s: %w", path, err)
	}
	m.Fields = flattenJSON("", raw)
	return m, nil
}

// flattenJSON lists a decoded JSON value as dotted keys and plain values,
// sorted by key, leaving out empty values.
func flattenJSON(prefix string, v any) []metaField {
	var out []metaField
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			out = append(out, flattenJSON(key, x)...)
		}
		slices.SortFunc(out, func(a, b metaField) int { return strings.Compare(a.Key, b.Key) })
	case []any:
		parts := make([]string, 0, len(v))
		for _, x := range v {
			b, _ := json.Marshal(x)
			parts = append(parts, strings.Trim(string(b), `"`))
		}
		if len(parts) > 0 {
			out = append(out, metaField{prefix, strings.Join(parts, ", ")})
		}
	case nil:
	case string:
		if v != "" {
			out = append(out, metaField{prefix, v})
		}
	default:
		b, _ := json.Marshal(v)
		out = append(out, metaField{prefix, string(b)})
	}
	return out
}

// describe is a one-line account of where and when the run happened.
func (m runMeta) describe() string {
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
	return strings.Join(parts, ", ")
}
