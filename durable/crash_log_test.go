package durable_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The side log of the crash test (crash_test.go): what each child process was told succeeded, one record
// a line, each line its CRC-32 in hex, a space, and the record as JSON. A child writes a line only after
// the call it records returned success ("attempt" records before the call they announce), with one write(2)
// per group of lines on a file opened with O_APPEND. A SIGKILL cannot take back a write(2) that returned:
// the kernel has the bytes, so every line a killed child wrote is in the file, and none that it did not.
// (The log is not fsynced: a SIGKILL kills the process, not the machine. Losing what the kernel had not
// written to disk is a power failure, which storagetest.Memory's Crash models in the root package's
// tests.) A write cut short by the kill leaves a torn last line, without its newline: the parent ignores it.
// Each child writes a file of its own, so a torn line is always the last of its file.

// Record kinds.
const (
	recBegin      = "B" // a child started (State: its sync mode, "ack" or WithSyncEvery's interval)
	recAttempt    = "A" // a send is about to be made (ID, Group, Dedup)
	recSent       = "S" // a send succeeded (ID, Msg, Seq, Dup, End)
	recDelivery   = "R" // a receive returned this message (Call, Idx, Start, End, Msg, Count, First, Sent, Dedup, Handle)
	recDelAttempt = "D" // a delete is about to be made (Msg, Count, Start)
	recDeleted    = "d" // the delete succeeded (End)
	recDelFailed  = "x" // the delete returned an error of the rules (Err)
	recFailed     = "F" // ChangeVisibility(handle, 0) succeeded: the receive was failed
	recFailErr    = "f" // ChangeVisibility(handle, 0) returned an error of the rules (Err)
	recMoveStart  = "m" // a move task is about to start
	recMoveTask   = "M" // a move task ended (Moved, ToMove, State)
	recFatal      = "E" // the child met an error it did not expect, and exits
	recSynced     = "Y" // WithSyncEvery: a real sync of the logs began (State "begin") or is done ("done"); Start: when it began
)

// crashReleased is the State of the F and f records of a child releasing an earlier child's receive.
const crashReleased = "released"

// crashRec is one line of a side log. Q is the queue pair: "f" (FIFO) or "s" (standard).
type crashRec struct {
	K      string `json:"k"`
	Q      string `json:"q,omitempty"`
	ID     string `json:"id,omitempty"` // the body's identity: the body up to its '|'
	Group  string `json:"g,omitempty"`
	Dedup  string `json:"dd,omitempty"`
	Msg    string `json:"m,omitempty"` // MessageID
	Seq    string `json:"sq,omitempty"`
	Dup    bool   `json:"dup,omitempty"`
	Call   int    `json:"c,omitempty"` // receive call, numbered within the child
	Idx    int    `json:"i,omitempty"` // position in the receive's result
	Start  int64  `json:"s,omitempty"` // Unix ns: before the call
	End    int64  `json:"e,omitempty"` // Unix ns: after the call returned
	Count  int    `json:"n,omitempty"` // ReceiveCount as delivered
	First  int64  `json:"fr,omitempty"`
	Sent   int64  `json:"st,omitempty"`
	Handle string `json:"h,omitempty"`
	Err    string `json:"err,omitempty"`
	Moved  int    `json:"mv,omitempty"`
	ToMove int    `json:"tm,omitempty"`
	State  string `json:"state,omitempty"`

	round int // the file's round, set when read
}

// crashLog appends records to a child's side log.
type crashLog struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
}

func createCrashLog(path string) (*crashLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &crashLog{f: f}, nil
}

// write appends recs in one write(2).
func (l *crashLog) write(recs ...crashRec) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = l.buf[:0]
	for i := range recs {
		js, err := json.Marshal(&recs[i])
		if err != nil {
			return err
		}
		l.buf = fmt.Appendf(l.buf, "%08x ", crc32.ChecksumIEEE(js))
		l.buf = append(l.buf, js...)
		l.buf = append(l.buf, '\n')
	}
	_, err := l.f.Write(l.buf)
	return err
}

func (l *crashLog) close() error { return l.f.Close() }

// readCrashLog reads the side log of a round. A missing file (the child was killed before it made one) has
// no records. It reports whether the last line was torn; any other damaged line is an error.
func readCrashLog(path string, round int) (recs []crashRec, torn bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return recs, true, nil // the last write, cut short by the kill
		}
		line := data[:i]
		data = data[i+1:]
		sum, js, ok := bytes.Cut(line, []byte{' '})
		want, perr := strconv.ParseUint(string(sum), 16, 32)
		if !ok || perr != nil || uint32(want) != crc32.ChecksumIEEE(js) {
			return nil, false, fmt.Errorf("%s line %d: bad checksum: %q", path, n, line)
		}
		var r crashRec
		if err := json.Unmarshal(js, &r); err != nil {
			return nil, false, fmt.Errorf("%s line %d: %v", path, n, err)
		}
		r.round = round
		recs = append(recs, r)
	}
	return recs, false, nil
}

func crashLogPath(dir string, round int) string {
	return filepath.Join(dir, "log", fmt.Sprintf("round-%04d.log", round))
}

func crashInputPath(dir string, round int) string {
	return filepath.Join(dir, "log", fmt.Sprintf("round-%04d.in.json", round))
}

// crashInput is what the parent tells a child before it starts: the FIFO sends that earlier children
// attempted without seeing them succeed (a producer retries them first, with the same deduplication id),
// and the receipt handles of receives that earlier children neither deleted nor failed (the child makes
// them visible again before it consumes, rather than leaving their groups blocked for the visibility
// timeout).
type crashInput struct {
	Pending []string       `json:"pending"`
	Release []crashRelease `json:"release"`
}

type crashRelease struct {
	Q      string `json:"q"`
	ID     string `json:"id"`
	Msg    string `json:"m"`
	Count  int    `json:"n"`
	Handle string `json:"h"`
}

// A body's identity is "<q>-r<round>-p<producer>-g<group>-n<n>", with "-P" at the end for a poison message
// (its consumers never delete it, so it goes to the dead-letter queue). The body is the identity, '|', and a
// padding of a length and a letter that the identity decides, up to 900 bytes. Some standard messages are
// sent with a delay (crashID.delayed).
type crashID struct {
	q           string
	round, prod int
	group       string
	n           int
	poison      bool
}

func (c crashID) String() string {
	s := fmt.Sprintf("%s-r%d-p%d-%s-n%d", c.q, c.round, c.prod, c.group, c.n)
	if c.poison {
		s += "-P"
	}
	return s
}

// delayed reports whether the message is sent with a delay of crashDelay: every fourth on the standard queue.
func (c crashID) delayed() bool { return c.q == "s" && c.n%4 == 1 }

func parseCrashID(id string) (crashID, error) {
	f := strings.Split(id, "-")
	bad := fmt.Errorf("body identity %q", id)
	if len(f) != 5 && (len(f) != 6 || f[5] != "P") {
		return crashID{}, bad
	}
	c := crashID{q: f[0], group: f[3], poison: len(f) == 6}
	var err1, err2, err3 error
	c.round, err1 = strconv.Atoi(strings.TrimPrefix(f[1], "r"))
	c.prod, err2 = strconv.Atoi(strings.TrimPrefix(f[2], "p"))
	c.n, err3 = strconv.Atoi(strings.TrimPrefix(f[4], "n"))
	if err1 != nil || err2 != nil || err3 != nil || (c.q != "f" && c.q != "s") || !strings.HasPrefix(c.group, "g") {
		return crashID{}, bad
	}
	return c, nil
}

// crashBodyOf returns the full body of identity id.
func crashBodyOf(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	x := h.Sum32()
	return id + "|" + strings.Repeat(string(rune('a'+x%26)), int(x>>8)%900)
}

// crashIDOf returns the identity of a body, or "" when the body is not one the test makes.
func crashIDOf(body string) string {
	id, _, ok := strings.Cut(body, "|")
	if !ok || crashBodyOf(id) != body {
		return ""
	}
	return id
}
