package sandbox

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// probeHTTP is the client of the kinds' HTTP probes; each request carries its
// own timeout.
var probeHTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// Get fetches path from the server at addr ("host:port" or a URL) over
// HTTP within timeout: a kind's readiness probe or its metrics.
func Get(ctx context.Context, addr, path string, timeout time.Duration) ([]byte, error) {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return GetURL(ctx, probeHTTP, strings.TrimRight(base, "/")+path, nil, timeout)
}

// GetURL fetches url with client, the header's fields set, within
// timeout: the body (16 MB at most), and an error naming the path for any
// status but 200 OK.
func GetURL(ctx context.Context, client *http.Client, url string, header http.Header, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET %s: %s", req.URL.Path, resp.Status)
	}
	return body, nil
}

// SplitLabels splits a Prometheus sample's labels, `a="x",b="y,z"` at the commas between labels.
func SplitLabels(s string) []string {
	var out []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
