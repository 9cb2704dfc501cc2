package impl_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
)

func TestAboutNamesLibraryVersionOrRecipe(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    impl.Driver
		want string
	}{
		// A test binary carries no dependency versions: the version part
		// is checked by running the built command (README's list).
		{"library", impl.Driver{Library: "github.com/HdrHistogram/hdrhistogram-go"}, "github.com/HdrHistogram/hdrhistogram-go "},
		{"recipe", impl.Driver{Recipe: "a lock"}, "lockbench's own recipe of a lock"},
		{"own", impl.Driver{}, "lockbench's own code"},
		{"not built in", impl.Driver{Library: "example.com/none"}, "example.com/none (version unknown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.About(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("About() = %q, want it to start with %q", got, tc.want)
			}
		})
	}
}
