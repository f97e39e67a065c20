package durable

import (
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble reports some conditions only in the text of its errors: no error type, sentinel or predicate of
// its API says them. Every decision durable makes on such a text is here, through pebbleSays, and
// TestPebbleTexts makes the Pebble of go.mod say each one, so that an upgrade that changes a text fails a
// test rather than a decision. Where Pebble offers a type or a predicate (pebble.ErrDBDoesNotExist,
// ErrDBNotPristine, IsCorruptionError, ErrCancelledCompaction), the code uses that instead.
type pebbleText uint8

const (
	// textLockHeld: a second DB of this process on a directory whose lock the first holds (Pebble checks
	// that itself, before the operating system's lock, and returns a plain error).
	textLockHeld pebbleText = iota
	// textSizeMismatch: a table file whose size is not what the MANIFEST recorded (checkConsistency in
	// open.go: a table cut short).
	textSizeMismatch
	// textReplayingWAL: Open met damage while it replayed a write-ahead log.
	textReplayingWAL
	// textEmptyTable: a flush that wrote no table, every key of its memtable deleted (errEmptyTable): no
	// failure.
	textEmptyTable
)

var pebbleTexts = [...]string{
	textLockHeld:     "lock held by current process",
	textSizeMismatch: "object size mismatch",
	textReplayingWAL: "replaying WAL",
	textEmptyTable:   "pebble: empty table",
}

// pebbleSays reports whether err is Pebble's error of condition t, by its text.
func pebbleSays(err error, t pebbleText) bool {
	if err == nil {
		return false
	}
	if t == textEmptyTable {
		return err.Error() == pebbleTexts[t]
	}
	return strings.Contains(err.Error(), pebbleTexts[t])
}

// tableMarker follows the number of a table file in Pebble's errors that name one, as checkConsistency
// (open.go) names a table that the MANIFEST lists and the directory lacks: "file 000005 (type sstable)
// unknown to the objstorage provider".
const tableMarker = " (type sstable)"

// tablesNamed returns the paths of the table files that an error of Pebble's names by number.
func tablesNamed(fs vfs.FS, dir string, err error) []string {
	var out []string
	for rest := err.Error(); ; {
		i := strings.Index(rest, tableMarker)
		if i < 0 {
			break
		}
		j := strings.LastIndexByte(rest[:i], ' ')
		if num := rest[j+1 : i]; j >= 0 && num != "" && strings.Trim(num, "0123456789") == "" {
			out = append(out, fs.PathJoin(dir, num+".sst"))
		}
		rest = rest[i+1:]
	}
	return out
}

// detailCarrier is what cockroachdb/errors, under Pebble's errors, writes in a message for a detail it keeps
// out of it (IsCorruptionError's errors carry one): oneLine drops it. It decides nothing.
const detailCarrier = "<corruption detail carrier>"
