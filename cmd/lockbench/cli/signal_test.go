package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// SIGHUP, like Ctrl-C and SIGTERM, ends a run with what it measured: exit
// 130, the finished cells in summary.json with the interrupt named, the
// report rendered, and no sandboxed server left behind.
func TestHangupEndsTheRunKeepingResults(t *testing.T) {
	cmd, out, tmp, stderr := startRun(t)
	cmd.Process.Signal(syscall.SIGHUP)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted {
		t.Errorf("exit %v, want %d; stderr %q", err, ExitInterrupted, stderr.String())
	}
	// stderr carries the run's notes too; the error is its last line, and
	// the only one.
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "lockbench: interrupted") ||
		strings.Count(stderr.String(), "\nlockbench: ") != 1 {
		t.Errorf("stderr does not end in one line saying it was interrupted: %q", stderr.String())
	}
	s, err := result.ReadSummary(filepath.Join(out, result.SummaryFile))
	if err != nil || len(s.Cells) == 0 || !strings.Contains(s.Failure, "canceled") {
		t.Errorf("summary after the hang-up: %v cells, failure %q, %v", len(s.Cells), s.Failure, err)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report of what was measured: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if left := procsIn(tmp); len(left) > 0 {
		t.Errorf("sandboxed servers left running: pids %v", left)
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-sandbox-*")); len(dirs) > 0 {
		t.Errorf("sandbox directories left: %v", dirs)
	}
}

// A sandboxed server that dies mid-run ends the run non-zero, with the
// reason on stderr and in summary.json, after writing what was measured.
func TestServerDeathIsAFailure(t *testing.T) {
	cmd, out, tmp, stderr := startRun(t, "--connect-timeout", "1s")
	servers := procsIn(tmp)
	if len(servers) == 0 {
		t.Fatal("found no sandboxed server to kill")
	}
	for _, pid := range servers {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitFailure {
		t.Errorf("exit %v, want %d; stderr %q", err, ExitFailure, stderr.String())
	}
	s, err := result.ReadSummary(filepath.Join(out, result.SummaryFile))
	if err != nil || len(s.Cells) == 0 || s.Failure == "" {
		t.Errorf("summary after the server died: %v cells, failure %q, %v", len(s.Cells), s.Failure, err)
	}
}

// A summary of a schema newer than this lockbench reads is refused in one
// line, not misread.
func TestReportRefusesAnUnknownSchema(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, result.MetaFile), []byte(`{}`), 0o644)
	os.WriteFile(filepath.Join(dir, result.SummaryFile), []byte(`{"schema": 99, "cells": []}`), 0o644)
	code, _, errOut := run("report", dir)
	if code != ExitFailure || !strings.Contains(errOut, "schema 99") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want 1 and one line naming schema 99", code, errOut)
	}
}

// procsIn lists the processes whose working directory lies under dir: the
// sandbox runs each server in a directory of its own under TMPDIR (a
// server's command line may not say where: redis-server rewrites it).
func procsIn(dir string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && strings.HasPrefix(cwd, dir+"/") {
			out = append(out, pid)
		}
	}
	return out
}

// startRun builds the command and starts `lockbench run` over a sandboxed
// Redis with args, its sandbox under a TMPDIR of its own, and waits until
// the first cell is in summary.json. It returns the command, the results
// directory, that TMPDIR and the command's stderr.
func startRun(t *testing.T, args ...string) (cmd *exec.Cmd, out, tmp string, stderr *bytes.Buffer) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	sandboxtest.Require(t, serverkind.Redis)
	dir := t.TempDir()
	bin := filepath.Join(dir, "lockbench")
	if b, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	tmp = filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	out = filepath.Join(dir, "out")
	// No server warm-up: it may run up to 30 s on a loaded machine before
	// the first cell, and these tests are about what a signal or a dead
	// server does to a run under way.
	cmd = exec.Command(bin, append([]string{"run", "--impl", "redis", "--clients", "1,2,4,8", "--duration", "1s",
		"--warmup", "0s", "--server-warmup", "0s", "-q", "--out", out}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if s, err := result.ReadSummary(filepath.Join(out, result.SummaryFile)); err == nil && len(s.Cells) > 0 {
			return cmd, out, tmp, stderr
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no cell was written in 60s: %s", stderr.String())
		}
	}
}
