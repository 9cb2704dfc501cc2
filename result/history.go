package result

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// HistoryExt is the extension of a cell's recorded operations.
const HistoryExt = ".history"

// OpKind is what a recorded operation asked of the lock.
type OpKind uint8

// Operations a history records.
const (
	OpAcquire OpKind = iota + 1 // blocking acquire
	OpTry                       // one attempt that does not wait
	OpRelease
	OpRenew
)

func (k OpKind) String() string {
	switch k {
	case OpAcquire:
		return "acquire"
	case OpTry:
		return "try"
	case OpRelease:
		return "release"
	case OpRenew:
		return "renew"
	}
	return "op?"
}

// Outcome is what a recorded operation answered.
type Outcome uint8

// Outcomes. Unknown is an operation that timed out or failed in a way that
// does not say whether it took effect (an acquire given up may still be
// granted later: Jepsen's "indeterminate"); the check lets it have taken
// effect or not.
const (
	OutOK      Outcome = iota + 1
	OutHeld            // a try found the lock held
	OutLost            // a release or renewal found the lock already lost
	OutUnknown         // timed out or errored: may or may not have taken effect
)

func (o Outcome) String() string {
	switch o {
	case OutOK:
		return "ok"
	case OutHeld:
		return "held"
	case OutLost:
		return "lost"
	case OutUnknown:
		return "unknown"
	}
	return "?"
}

// Op is one operation of a client on a lock, from its call to its return
// in Unix nanoseconds; Token is the grant's fencing token when Fenced.
// Phase separates the parts of a cell the check must not join (a fault
// scenario's repeats).
type Op struct {
	Call, Return int64
	Token        uint64
	Lock         int32
	Client       int32
	Phase        uint16
	Kind         OpKind
	Outcome      Outcome
	Fenced       bool
}

// OpLog is one client's operations: a slice allocated before the cell
// starts and never grown, so recording neither allocates nor locks. Once
// full, further operations are counted and dropped; the check then stops
// where the first full log stopped (see History.Complete).
type OpLog struct {
	ops     []Op
	dropped int64
}

// NewOpLog returns a log holding at most n operations.
func NewOpLog(n int) *OpLog { return &OpLog{ops: make([]Op, 0, max(n, 1))} }

// Add records op, or counts it as dropped once the log is full.
func (l *OpLog) Add(op Op) {
	if l == nil {
		return
	}
	if len(l.ops) == cap(l.ops) {
		l.dropped++
		return
	}
	l.ops = append(l.ops, op)
}

// Ops returns the operations recorded, in the client's order.
func (l *OpLog) Ops() []Op { return l.ops }

// Dropped is how many operations came after the log was full.
func (l *OpLog) Dropped() int64 { return l.dropped }

// History is a cell's recorded operations, every client's, with the lock
// names they refer to and when the cell started.
type History struct {
	Start int64 // Unix ns
	Ops   []Op
	// Until, when not zero, is where the history stops being complete
	// (Unix ns): some client's log was full from then on.
	Until   int64
	Dropped int64
	// Names are the lock names by Op.Lock.
	Names []string
	// Expiring says whether the lock's leases end without their holder
	// (a TTL, a session): a grant whose release answered "lost" may then
	// have ended while its holder still believed it held the lock.
	Expiring bool
}

// HistoryOf joins clients' logs into one history, complete up to where
// the first full log stopped.
func HistoryOf(start int64, logs []*OpLog, names []string, expiring bool) *History {
	h := &History{Start: start, Names: names, Expiring: expiring}
	n := 0
	for _, l := range logs {
		if l != nil {
			n += len(l.ops)
		}
	}
	h.Ops = make([]Op, 0, n)
	for _, l := range logs {
		if l == nil {
			continue
		}
		h.Ops = append(h.Ops, l.ops...)
		if l.dropped > 0 && len(l.ops) > 0 {
			last := l.ops[len(l.ops)-1].Return
			if h.Until == 0 || last < h.Until {
				h.Until = last
			}
		}
		h.Dropped += l.dropped
	}
	return h
}

// Name is lock i's name.
func (h *History) Name(i int32) string {
	if int(i) < len(h.Names) && i >= 0 {
		return h.Names[i]
	}
	return LockName(int(i))
}

// opLen is an operation's size on disk: little-endian, fixed width.
const opLen = 8 + 8 + 8 + 4 + 4 + 2 + 1 + 1 + 1

// historyEnd, in an operation's kind byte, marks the end record: the
// number of operations before it in the token's place (see grantsEnd).
const historyEnd = 0xFF

// ErrHistoryCorrupt is wrapped by ReadHistory's error for a file cut short
// or altered.
var ErrHistoryCorrupt = errors.New("result: history file cut short or altered")

// WriteHistory writes h's operations to cell c's history file in dir,
// under a temporary name until all of it is on disk.
func WriteHistory(dir string, c Cell, h *History) (err error) {
	path, err := CreateCellPath(dir, c, HistoryExt)
	if err != nil {
		return err
	}
	f, err := os.Create(path + PartialExt)
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("result: history: %w", cerr)
		}
		if err == nil {
			if rerr := os.Rename(path+PartialExt, path); rerr != nil {
				err = fmt.Errorf("result: history: %w", rerr)
			}
		}
	}()
	w := bufio.NewWriterSize(f, 64<<10)
	var b [opLen]byte
	for _, op := range h.Ops {
		putOp(&b, op)
		w.Write(b[:])
	}
	b = [opLen]byte{}
	binary.LittleEndian.PutUint64(b[16:], uint64(len(h.Ops)))
	b[34] = historyEnd
	w.Write(b[:])
	if err := w.Flush(); err != nil {
		return fmt.Errorf("result: history: %w", err)
	}
	return nil
}

func putOp(b *[opLen]byte, op Op) {
	binary.LittleEndian.PutUint64(b[0:], uint64(op.Call))
	binary.LittleEndian.PutUint64(b[8:], uint64(op.Return))
	binary.LittleEndian.PutUint64(b[16:], op.Token)
	binary.LittleEndian.PutUint32(b[24:], uint32(op.Lock))
	binary.LittleEndian.PutUint32(b[28:], uint32(op.Client))
	binary.LittleEndian.PutUint16(b[32:], op.Phase)
	b[34], b[35], b[36] = byte(op.Kind), byte(op.Outcome), 0
	if op.Fenced {
		b[36] = 1
	}
}

// ReadHistory returns the operations of cell c's history file in dir; an
// error names the file and wraps os.ErrNotExist or ErrHistoryCorrupt.
func ReadHistory(dir string, c Cell) ([]Op, error) {
	f, err := os.Open(CellPath(dir, c, HistoryExt))
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	defer f.Close()
	corrupt := func(why string) error { return fmt.Errorf("%w: %s: %s", ErrHistoryCorrupt, f.Name(), why) }
	r := bufio.NewReaderSize(f, 64<<10)
	var b [opLen]byte
	var ops []Op
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return ops, corrupt(fmt.Sprintf("no end record after %d operations", len(ops)))
			}
			return ops, fmt.Errorf("result: %s: %w", f.Name(), err)
		}
		if b[34] == historyEnd {
			if got := binary.LittleEndian.Uint64(b[16:]); got != uint64(len(ops)) {
				return ops, corrupt(fmt.Sprintf("%d operations, its end record says %d", len(ops), got))
			}
			return ops, nil
		}
		k, o := OpKind(b[34]), Outcome(b[35])
		if k < OpAcquire || k > OpRenew || o < OutOK || o > OutUnknown || b[36] > 1 {
			return ops, corrupt(fmt.Sprintf("operation %d is neither of a known kind nor outcome", len(ops)))
		}
		ops = append(ops, Op{
			Call: int64(binary.LittleEndian.Uint64(b[0:])), Return: int64(binary.LittleEndian.Uint64(b[8:])),
			Token: binary.LittleEndian.Uint64(b[16:]), Lock: int32(binary.LittleEndian.Uint32(b[24:])),
			Client: int32(binary.LittleEndian.Uint32(b[28:])), Phase: binary.LittleEndian.Uint16(b[32:]),
			Kind: k, Outcome: o, Fenced: b[36] == 1,
		})
	}
}

// LockName is the name of lock i in a cell: "lock-i".
func LockName(i int) string { return "lock-" + strconv.Itoa(i) }
