// Package k8s has tests only: they decode every manifest under deploy/k8s
// strictly against the Kubernetes API types and check them against
// lockbench's own flags. Being test-only keeps k8s.io/api out of the
// lockbench binary.
package k8s

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"
)

const kustomizationFile = "kustomization.yaml"

// decoder decodes a YAML document by its apiVersion and kind into the
// typed struct, as the API server would: strictly, so that an unknown,
// misspelt (case included) or duplicated field is an error rather than a
// setting silently dropped.
func decoder() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Yaml: true, Strict: true})
}

// kustomization is the part of kustomize's Kustomization these manifests
// use; a field outside it fails the strict decode (decodeKustomization).
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
}

// manifests is every object under deploy/k8s, with the directory
// (a kustomization) it belongs to.
type manifests struct {
	objects        []placed[runtime.Object]
	kustomizations map[string]kustomization // dir → its kustomization.yaml
}

type placed[T any] struct {
	dir, file string // slash-separated, relative to deploy/k8s
	obj       T
}

func loadManifests(t *testing.T) manifests {
	t.Helper()
	m := manifests{kustomizations: map[string]kustomization{}}
	dec := decoder()
	for _, file := range yamlFiles(t) {
		b, err := os.ReadFile(filepath.FromSlash(file))
		if err != nil {
			t.Fatal(err)
		}
		dir := path.Dir(file)
		if path.Base(file) == kustomizationFile {
			k, err := decodeKustomization(b)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			m.kustomizations[dir] = k
			continue
		}
		objs, err := decodeAll(dec, b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(objs) == 0 {
			t.Fatalf("%s: no object", file)
		}
		for _, o := range objs {
			m.objects = append(m.objects, placed[runtime.Object]{dir, file, o})
		}
	}
	if len(m.objects) == 0 {
		t.Fatal("no manifests found")
	}
	return m
}

// yamlFiles returns every .yaml/.yml file under the current directory.
func yamlFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := path.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// decodeAll decodes every document of a multi-document YAML file.
func decodeAll(dec runtime.Decoder, b []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []runtime.Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if j, err := sigsyaml.YAMLToJSON(doc); err == nil && string(bytes.TrimSpace(j)) == "null" {
			continue // comments only
		}
		obj, crd, err := decodeCRD(doc)
		if !crd {
			obj, _, err = dec.Decode(doc, nil, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		out = append(out, obj)
	}
}

func decodeKustomization(b []byte) (kustomization, error) {
	var k kustomization
	if _, err := sigsyaml.YAMLToJSONStrict(b); err != nil {
		return k, err // a duplicated field
	}
	j, err := sigsyaml.YAMLToJSON(b)
	if err != nil {
		return k, err
	}
	strict, err := sigsjson.UnmarshalStrict(j, &k)
	if err = errors.Join(append([]error{err}, strict...)...); err != nil {
		return k, err
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		return k, fmt.Errorf("apiVersion %q kind %q, want kustomize.config.k8s.io/v1beta1 Kustomization", k.APIVersion, k.Kind)
	}
	return k, nil
}

// all returns every object of type T.
func all[T runtime.Object](m manifests) []placed[T] {
	var out []placed[T]
	for _, o := range m.objects {
		if v, ok := o.obj.(T); ok {
			out = append(out, placed[T]{o.dir, o.file, v})
		}
	}
	return out
}

// TestManifestsDecodeStrictly lists what loadManifests decoded: every file
// under deploy/k8s, each document typed by its apiVersion and kind.
func TestManifestsDecodeStrictly(t *testing.T) {
	m := loadManifests(t)
	kinds := map[string]int{}
	for _, o := range m.objects {
		gvk := o.obj.GetObjectKind().GroupVersionKind()
		kinds[gvk.Kind]++
		t.Logf("%-24s %s/%s", o.file, gvk.GroupVersion(), gvk.Kind)
	}
	for _, kind := range []string{"Job", "StatefulSet", "Service", "ConfigMap", "PersistentVolumeClaim"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s decoded; kinds: %v", kind, kinds)
		}
	}
}

// TestStrictDecodeRejects shows that the decoding above can fail: each case
// alters one manifest as a typo would, and the decode must name the field.
func TestStrictDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, new, field string
	}{
		{"unknown field in a Job's spec", "shards/job.yaml",
			"  completionMode: Indexed\n", "  completionMode: Indexed\n  completionsMode: Indexed\n", "completionsMode"},
		{"field in the wrong case in a container", "shards/job.yaml",
			"          imagePullPolicy: IfNotPresent\n", "          imagePullPolicy: IfNotPresent\n          ImagePullPolicy: Always\n", "ImagePullPolicy"},
		{"unknown field in a probe", "servers/zookeeper.yaml",
			"            periodSeconds: 2\n", "            periodSeconds: 2\n            periodSecond: 2\n", "periodSecond"},
		{"duplicated field", "servers/redis.yaml",
			"  replicas: 1\n", "  replicas: 1\n  replicas: 2\n", "replicas"},
		{"unknown field in a kustomization", "shards/kustomization.yaml",
			"resources:\n", "resource:\n  - extra.yaml\nresources:\n", "resource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.FromSlash(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			if strings.Count(src, tc.old) != 1 {
				t.Fatalf("%s: %q occurs %d times, want once", tc.file, tc.old, strings.Count(src, tc.old))
			}
			mutated := []byte(strings.Replace(src, tc.old, tc.new, 1))
			if path.Base(tc.file) == kustomizationFile {
				_, err = decodeKustomization(mutated)
			} else {
				_, err = decodeAll(decoder(), mutated)
			}
			switch {
			case err == nil:
				t.Fatalf("%s with %q decoded without error", tc.file, strings.TrimSpace(tc.new))
			case !strings.Contains(err.Error(), tc.field):
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

// TestKustomizations: every manifest belongs to the kustomization of its
// directory (or `kubectl apply -k` would leave it out), and an image
// override names an image that the directory's pods run.
func TestKustomizations(t *testing.T) {
	m := loadManifests(t)
	files := map[string][]string{} // dir → manifest files
	for _, o := range m.objects {
		if rel := path.Base(o.file); !slices.Contains(files[o.dir], rel) {
			files[o.dir] = append(files[o.dir], rel)
		}
	}
	for dir, got := range files {
		k, ok := m.kustomizations[dir]
		if !ok {
			t.Errorf("%s: no %s", dir, kustomizationFile)
			continue
		}
		want := slices.Sorted(slices.Values(k.Resources))
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Errorf("%s/%s: resources %v, but the directory holds %v", dir, kustomizationFile, want, got)
		}
		for _, img := range k.Images {
			used := slices.ContainsFunc(podsIn(m, dir), func(p pod) bool {
				return slices.ContainsFunc(p.spec.Containers, func(c corev1.Container) bool { return imageName(c.Image) == img.Name })
			})
			if !used {
				t.Errorf("%s/%s: images: %q is the image of no container there", dir, kustomizationFile, img.Name)
			}
		}
	}
}

// imageName is an image reference without its tag or digest.
func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}
