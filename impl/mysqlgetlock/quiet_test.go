package mysqlgetlock

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/sandboxtest"
)

// quietChild marks the process TestDriverWritesNothingToStderr runs as
// its child.
const quietChild = "LOCKBENCH_TEST_QUIET_CHILD"

// A connection the server killed fails the client's next statement with
// an error the driver returns — and go-sql-driver's own logger would
// also write "[mysql] … packets.go:58 unexpected EOF" to stderr, which is
// lockbench's notes' and one-line failures' alone. The child process does
// that; the parent reads its stderr.
func TestDriverWritesNothingToStderr(t *testing.T) {
	if os.Getenv(quietChild) != "" {
		killedConnection(t)
		return
	}
	d, _ := impl.Lookup("mysql-getlock")
	servers := sandboxtest.Start(t, d.Needs...)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDriverWritesNothingToStderr$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), quietChild+"=1", impl.EnvName(Role)+"="+servers[Role][0])
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "acquire after KILL CONNECTION: ") {
		t.Fatalf("the child did not reach its killed connection:\n%s", stdout.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("the driver wrote to stderr:\n%s", stderr.String())
	}
}

// killedConnection has the server kill a client's connection and the
// client then try to acquire on it.
func killedConnection(t *testing.T) {
	l := newClient(t, impl.Servers{Role: {os.Getenv(impl.EnvName(Role))}}, 0)
	if _, err := l.ctl.db.ExecContext(context.Background(), "KILL CONNECTION "+strconv.FormatInt(l.id, 10)); err != nil {
		t.Fatal(err)
	}
	_, err := l.Acquire(context.Background(), "quiet")
	if err == nil {
		t.Fatal("acquire on a killed connection succeeded")
	}
	fmt.Println("acquire after KILL CONNECTION:", err)
}
