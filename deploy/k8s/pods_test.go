package k8s

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Fields of its own pod that a Job's container may read: the pod's
// completion index (Indexed Jobs) and the uid of the Job that made it.
const (
	completionIndexAnnotation = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
	jobUIDLabel               = "metadata.labels['batch.kubernetes.io/controller-uid']"
)

// pod is a pod template (of a Job or StatefulSet) or a bare Pod.
type pod struct {
	owner, dir string // owner: "Job/name"
	labels     map[string]string
	spec       *corev1.PodSpec
}

func pods(m manifests) []pod {
	var out []pod
	for _, j := range all[*batchv1.Job](m) {
		out = append(out, pod{"Job/" + j.obj.Name, j.dir, j.obj.Spec.Template.Labels, &j.obj.Spec.Template.Spec})
	}
	for _, s := range all[*appsv1.StatefulSet](m) {
		out = append(out, pod{"StatefulSet/" + s.obj.Name, s.dir, s.obj.Spec.Template.Labels, &s.obj.Spec.Template.Spec})
	}
	for _, p := range all[*corev1.Pod](m) {
		out = append(out, pod{"Pod/" + p.obj.Name, p.dir, p.obj.Labels, &p.obj.Spec})
	}
	return out
}

func podsIn(m manifests, dir string) []pod {
	var out []pod
	for _, p := range pods(m) {
		if p.dir == dir {
			out = append(out, p)
		}
	}
	return out
}

func containers(p pod) []corev1.Container {
	return append(append([]corev1.Container(nil), p.spec.InitContainers...), p.spec.Containers...)
}

func configMap(m manifests, name string) *corev1.ConfigMap {
	for _, c := range all[*corev1.ConfigMap](m) {
		if c.obj.Name == name {
			return c.obj
		}
	}
	return nil
}

// containerEnv resolves a container's environment as the kubelet would,
// for the pod of completion index index: every ConfigMap and key it refers
// to must exist. Errors name what is missing.
func containerEnv(m manifests, c corev1.Container, index int) (map[string]string, []error) {
	env := map[string]string{}
	var errs []error
	for _, from := range c.EnvFrom {
		ref := from.ConfigMapRef
		if ref == nil {
			errs = append(errs, fmt.Errorf("envFrom other than a ConfigMap: %+v", from))
			continue
		}
		cm := configMap(m, ref.Name)
		if cm == nil {
			errs = append(errs, fmt.Errorf("envFrom: no ConfigMap %q", ref.Name))
			continue
		}
		for k, v := range cm.Data {
			env[from.Prefix+k] = v
		}
	}
	for _, e := range c.Env {
		switch from := e.ValueFrom; {
		case from == nil:
			env[e.Name] = expand(e.Value, env, nil)
		case from.ConfigMapKeyRef != nil:
			ref := from.ConfigMapKeyRef
			cm := configMap(m, ref.Name)
			v, ok := "", false
			if cm != nil {
				v, ok = cm.Data[ref.Key]
			}
			if !ok {
				errs = append(errs, fmt.Errorf("%s: no key %q in ConfigMap %q", e.Name, ref.Key, ref.Name))
			}
			env[e.Name] = v
		case from.FieldRef != nil && from.FieldRef.FieldPath == completionIndexAnnotation:
			env[e.Name] = fmt.Sprint(index)
		case from.FieldRef != nil && from.FieldRef.FieldPath == jobUIDLabel:
			env[e.Name] = "0b7c3f4e-job-uid"
		default:
			errs = append(errs, fmt.Errorf("%s: a source this test does not resolve: %+v", e.Name, from))
		}
	}
	return env, errs
}

// expand replaces $(NAME) as the kubelet does in env values, command and
// args: NAME is everything up to the next ')', and $$ is a literal $. A
// name not in env stays as written (Kubernetes passes it on verbatim) and
// is appended to *missing.
func expand(s string, env map[string]string, missing *[]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
				if missing != nil {
					*missing = append(*missing, name)
				}
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// expandAll expands every argument; missing lists the undefined names.
func expandAll(args []string, env map[string]string) (out, missing []string) {
	for _, a := range args {
		out = append(out, expand(a, env, &missing))
	}
	return out, missing
}

// TestConfigMapRefs: every ConfigMap and key a pod refers to exists (a
// missing key keeps the pod from starting), and every $(VAR) in a
// container's command and args is defined (an undefined one would reach
// lockbench verbatim).
func TestConfigMapRefs(t *testing.T) {
	m := loadManifests(t)
	for _, p := range pods(m) {
		for _, c := range containers(p) {
			env, errs := containerEnv(m, c, 0)
			for _, err := range errs {
				t.Errorf("%s container %s: %v", p.owner, c.Name, err)
			}
			if _, missing := expandAll(append(c.Command, c.Args...), env); len(missing) > 0 {
				t.Errorf("%s container %s: $(…) names no variable of the container: %v", p.owner, c.Name, missing)
			}
		}
		for _, v := range p.spec.Volumes {
			if v.ConfigMap == nil {
				continue
			}
			cm := configMap(m, v.ConfigMap.Name)
			if cm == nil {
				t.Errorf("%s volume %s: no ConfigMap %q", p.owner, v.Name, v.ConfigMap.Name)
				continue
			}
			for _, item := range v.ConfigMap.Items {
				if _, ok := cm.Data[item.Key]; !ok {
					t.Errorf("%s volume %s: no key %q in ConfigMap %q", p.owner, v.Name, item.Key, cm.Name)
				}
			}
		}
	}
}

// TestImagesAndResources: every container names an image with a tag and
// requests CPU and memory, so that the scheduler does not stack load
// generators and servers onto one node unawares.
func TestImagesAndResources(t *testing.T) {
	m := loadManifests(t)
	for _, p := range pods(m) {
		for _, c := range containers(p) {
			if c.Image == "" || imageName(c.Image) == c.Image {
				t.Errorf("%s container %s: image %q, want name:tag", p.owner, c.Name, c.Image)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
					t.Errorf("%s container %s: no %s request", p.owner, c.Name, r)
				}
			}
			if strings.HasSuffix(c.Image, ":latest") && c.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("%s container %s: %s with pull policy %q: a :latest image loaded into the nodes (kind load) would be pulled again", p.owner, c.Name, c.Image, c.ImagePullPolicy)
			}
		}
	}
}

// TestExpand pins expand to the kubelet's rules, on which the checks of
// $(…) above rely.
func TestExpand(t *testing.T) {
	env := map[string]string{"A": "a", "IDX": "3"}
	for _, tc := range []struct {
		in, want string
		missing  []string
	}{
		{"--out=/results/shard-$(IDX)", "--out=/results/shard-3", nil},
		{"$(A)$(A)", "aa", nil},
		{"$$(A)", "$(A)", nil},
		{"$(B)", "$(B)", []string{"B"}},
		{"$((${H##*-} + 1))", "$((${H##*-} + 1))", []string{"(${H##*-} + 1"}},
		{"$$((${H##*-} + 1))", "$((${H##*-} + 1))", nil},
		{"a$b $(", "a$b $(", nil},
		{"cost $", "cost $", nil},
	} {
		var missing []string
		if got := expand(tc.in, env, &missing); got != tc.want || !slices.Equal(missing, tc.missing) {
			t.Errorf("expand(%q) = %q, missing %q; want %q, missing %q", tc.in, got, missing, tc.want, tc.missing)
		}
	}
}
