package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// csvColumn is one column of summary.csv and how to read it off a cell.
type csvColumn struct {
	name string
	get  func(reflect.Value) string
}

// csvColumns derives summary.csv's columns from Cell itself, so a field
// added to Cell shows up without anyone remembering to: scalar fields in
// declaration order, named by their JSON tags; nested structs flattened
// with their tag as prefix (acquire_latency_us_p99); the embedded counters
// without one (round_trips); maps one column per key seen in any cell,
// keys sorted (server_watch_triggered, errors_by_class_timeout,
// distributions_validity_ms_p1); pointers blank when nil. Lists (vectors,
// violations) are left out: they are not one value.
func csvColumns(cells []Cell) []csvColumn {
	vals := make([]reflect.Value, len(cells))
	for i := range cells {
		vals[i] = reflect.ValueOf(cells[i])
	}
	return structColumns(reflect.TypeFor[Cell](), "", vals, func(v reflect.Value) reflect.Value { return v })
}

// structColumns and typeColumns walk a type; at reads the value being
// walked off a cell, and roots are all the cells (for map keys).
func structColumns(t reflect.Type, prefix string, roots []reflect.Value, at func(reflect.Value) reflect.Value) []csvColumn {
	var cols []csvColumn
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && !f.Anonymous {
			name = strings.ToLower(f.Name)
		}
		full := name
		if prefix != "" && name != "" {
			full = prefix + "_" + name
		} else if name == "" {
			full = prefix
		}
		idx := i
		field := func(v reflect.Value) reflect.Value { return at(v).Field(idx) }
		cols = append(cols, typeColumns(f.Type, full, roots, field)...)
	}
	return cols
}

func typeColumns(t reflect.Type, name string, roots []reflect.Value, at func(reflect.Value) reflect.Value) []csvColumn {
	switch t.Kind() {
	case reflect.Struct:
		if t.PkgPath() == "time" {
			return []csvColumn{{name, func(v reflect.Value) string { return fmt.Sprint(at(v).Interface()) }}}
		}
		return structColumns(t, name, roots, at)
	case reflect.Pointer:
		elem := t.Elem()
		if elem.Kind() == reflect.Struct {
			// A nil pointer reads as the zero struct, and its columns blank.
			elemAt := func(v reflect.Value) reflect.Value {
				p := at(v)
				if p.IsNil() {
					return reflect.Zero(elem)
				}
				return p.Elem()
			}
			sub := typeColumns(elem, name, roots, elemAt)
			for i := range sub {
				get := sub[i].get
				sub[i].get = func(v reflect.Value) string {
					if at(v).IsNil() {
						return ""
					}
					return get(v)
				}
			}
			return sub
		}
		return []csvColumn{{name, func(v reflect.Value) string {
			p := at(v)
			if p.IsNil() {
				return ""
			}
			return scalar(p.Elem())
		}}}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil
		}
		keys := map[string]bool{}
		for _, v := range roots {
			for _, k := range at(v).MapKeys() {
				keys[k.String()] = true
			}
		}
		var cols []csvColumn
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			key := reflect.ValueOf(k)
			elemAt := func(v reflect.Value) reflect.Value {
				e := at(v).MapIndex(key)
				if !e.IsValid() {
					return reflect.Zero(t.Elem())
				}
				return e
			}
			if t.Elem().Kind() == reflect.Struct {
				sub := typeColumns(t.Elem(), name+"_"+k, roots, elemAt)
				// A key missing from a cell's map is blank, not zero.
				for i := range sub {
					get := sub[i].get
					sub[i].get = func(v reflect.Value) string {
						if !at(v).MapIndex(key).IsValid() {
							return ""
						}
						return get(v)
					}
				}
				cols = append(cols, sub...)
				continue
			}
			if !isScalar(t.Elem().Kind()) {
				continue
			}
			cols = append(cols, csvColumn{name + "_" + k, func(v reflect.Value) string {
				e := at(v).MapIndex(key)
				if !e.IsValid() {
					return ""
				}
				return scalar(e)
			}})
		}
		return cols
	}
	if !isScalar(t.Kind()) {
		return nil
	}
	return []csvColumn{{name, func(v reflect.Value) string { return scalar(at(v)) }}}
}

func isScalar(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// scalar formats a value exactly and the same way every time: floats in
// the shortest form that reads back to the same number.
func scalar(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return v.String()
}

// summaryCSV renders summary.csv: a header, then one row per cell.
func summaryCSV(cells []Cell) ([]byte, error) {
	cols := csvColumns(cells)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.name
	}
	w.Write(head)
	for _, cell := range cells {
		v := reflect.ValueOf(cell)
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = c.get(v)
		}
		w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return buf.Bytes(), nil
}
