package sqsapi

import (
	"errors"
	"slices"

	"github.com/fifoq/fifoq"
)

// What the batch actions (SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch) share: their
// entries' ids, and their results of successful and failed entries.

// batchEntry is an entry of a batch action, known by its Id.
type batchEntry[E any] interface {
	*E
	entryID() string
}

func (e *deleteEntry) entryID() string { return e.Id }

func (e *visibilityEntry) entryID() string { return e.Id }

func (e *sendEntry) entryID() string { return e.Id }

// checkBatch checks what fails a whole batch action before its entries are looked at (spec 7.2.1): their
// number (fifoq's rule, which fifoq checks again), then their ids, which fifoq does not see. given is the
// number of entries the request had: with more than fifoq.MaxBatchEntries, entries holds only some of them.
// An empty batch passes: the fifoq batch call refuses it, with the name of its entries.
func checkBatch[E any, P batchEntry[E]](given int, entries []E) *apiError {
	if err := fifoq.CheckBatchLen(max(given, len(entries))); err != nil {
		return coreError(err)
	}
	for i := range entries {
		id := P(&entries[i]).entryID()
		if !validBatchID(id) {
			return newError(codeInvalidBatchEntryID, "A batch entry id can only contain alphanumeric characters, "+
				"hyphens and underscores. It can be at most 80 letters long.")
		}
		for j := range i {
			if P(&entries[j]).entryID() == id {
				return newError(codeIDsNotDistinct, "Id %s repeated.", id)
			}
		}
	}
	return nil
}

func validBatchID(id string) bool {
	if id == "" || len(id) > 80 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// failedEntry is an entry of a batch that failed alone (BatchResultErrorEntry).
type failedEntry struct {
	index int // in the request, to keep the request's order
	id    string
	err   *apiError
}

func sortFailed(f []failedEntry) {
	slices.SortFunc(f, func(a, b failedEntry) int { return a.index - b.index })
}

func encodeFailed(e encoder, failed []failedEntry) {
	e.beginList("Failed", "BatchResultErrorEntry")
	for _, f := range failed {
		e.beginItem()
		e.str("Id", f.id)
		e.boolean("SenderFault", f.err.status < 500)
		e.str("Code", f.err.code)
		e.str("Message", f.err.message)
		e.endItem()
	}
	e.endList()
}

// idBatchOutput is the result of DeleteMessageBatch and ChangeMessageVisibilityBatch.
type idBatchOutput struct {
	entry  string // the XML name of a successful entry
	ok     []string
	failed []failedEntry
}

func (o *idBatchOutput) encode(e encoder) {
	e.beginList("Successful", o.entry)
	for _, id := range o.ok {
		e.beginItem()
		e.str("Id", id)
		e.endItem()
	}
	e.endList()
	encodeFailed(e, o.failed)
}

// settle sorts the entries a batch call was given (index[k] is the request entry of call entry k) into
// successful and failed ones, from the call's error. An error other than a *fifoq.BatchError fails the
// whole request.
func (o *idBatchOutput) settle(err error, index []int, id func(i int) string) error {
	var entryErrs [fifoq.MaxBatchEntries]error
	if err := sortEntryErrors(err, len(index), &entryErrs); err != nil {
		return coreError(err)
	}
	if o.ok == nil {
		o.ok = make([]string, 0, len(index))
	}
	for k, i := range index {
		if entryErrs[k] != nil {
			o.failed = append(o.failed, failedEntry{i, id(i), coreError(entryErrs[k])})
			continue
		}
		o.ok = append(o.ok, id(i))
	}
	return nil
}

// sortEntryErrors sorts the error of a fifoq batch call of n entries: the entries a *fifoq.BatchError names
// get their errors in errs, and nil is returned; any other error, the failure of the whole call, is returned.
func sortEntryErrors(err error, n int, errs *[fifoq.MaxBatchEntries]error) error {
	if err == nil {
		return nil
	}
	be, ok := asBatchError(err)
	if !ok {
		return err
	}
	for _, x := range be.Entries {
		if x.Index >= 0 && x.Index < n {
			errs[x.Index] = x.Err
		}
	}
	return nil
}

// asBatchError is errors.As for a *fifoq.BatchError, without its allocation when err is one.
func asBatchError(err error) (*fifoq.BatchError, bool) {
	if be, ok := err.(*fifoq.BatchError); ok {
		return be, true
	}
	var be *fifoq.BatchError
	return be, errors.As(err, &be)
}
