package sqsapi

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/fifoq/fifoq"
)

// DeleteMessage, ChangeMessageVisibility and their batches, and what every batch action shares.

// batchEntry is an entry of a batch action, known by its Id.
type batchEntry[E any] interface {
	*E
	entryID() string
}

func (e *deleteEntry) entryID() string     { return e.Id }
func (e *visibilityEntry) entryID() string { return e.Id }
func (e *sendEntry) entryID() string       { return e.Id }

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

type deleteMessageInput struct{ QueueUrl, ReceiptHandle string }

func (in *deleteMessageInput) fromQuery(f *form) error {
	in.QueueUrl, in.ReceiptHandle = f.get("QueueUrl"), f.get("ReceiptHandle")
	return nil
}

func deleteMessage(s *Server, c *call, in *deleteMessageInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if in.ReceiptHandle == "" {
		return nil, missing("ReceiptHandle")
	}
	if err := q.Queue.Delete(c.ctx, in.ReceiptHandle); err != nil {
		return nil, coreError(err)
	}
	return nil, nil
}

// deleteEntry is one entry of DeleteMessageBatch.
type deleteEntry struct{ Id, ReceiptHandle string }

type deleteMessageBatchInput struct {
	QueueUrl []byte // needed only while the request is served
	Entries  []deleteEntry

	entriesGiven int // entries a query-protocol form gave, of which it decodes 11 at most; 0 from JSON
}

func (in *deleteMessageBatchInput) fromQuery(f *form) error {
	in.QueueUrl = []byte(f.get("QueueUrl"))
	const prefix = "DeleteMessageBatchRequestEntry"
	ns, given := f.indices(prefix, fifoq.MaxBatchEntries+1)
	in.entriesGiven = given
	for _, n := range ns {
		p := prefix + "." + strconv.Itoa(n) + "."
		in.Entries = append(in.Entries, deleteEntry{Id: f.get(p + "Id"), ReceiptHandle: f.get(p + "ReceiptHandle")})
	}
	return nil
}

func deleteMessageBatch(s *Server, c *call, in *deleteMessageBatchInput) (output, error) {
	q, err := s.resolveBytes(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(in.entriesGiven, in.Entries); err != nil {
		return nil, err
	}
	out := &c.hot.deleted
	out.entry = "DeleteMessageBatchResultEntry"
	var handleBuf [fifoq.MaxBatchEntries]string
	var indexBuf [fifoq.MaxBatchEntries]int
	handles, index := handleBuf[:0], indexBuf[:0]
	for i, e := range in.Entries {
		if e.ReceiptHandle == "" {
			out.failed = append(out.failed, failedEntry{i, e.Id, missing("ReceiptHandle")})
			continue
		}
		handles, index = append(handles, e.ReceiptHandle), append(index, i)
	}
	if len(handles) > 0 || len(in.Entries) == 0 { // fifoq refuses an empty batch
		err := q.Queue.DeleteBatch(c.ctx, handles)
		if err := out.settle(err, index, func(i int) string { return in.Entries[i].Id }); err != nil {
			return nil, err
		}
	}
	sortFailed(out.failed)
	return out, nil
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

// visibilityTimeout converts the VisibilityTimeout of a visibility change, which is required; fifoq checks
// its range. A 0 is a 0 here: the message becomes visible at once.
func visibilityTimeout(v *int) (time.Duration, *apiError) {
	if v == nil {
		return 0, missing("VisibilityTimeout")
	}
	return secondsOf(*v), nil
}

type changeVisibilityInput struct {
	QueueUrl          string
	ReceiptHandle     string
	VisibilityTimeout *int
}

func (in *changeVisibilityInput) fromQuery(f *form) error {
	in.QueueUrl, in.ReceiptHandle = f.get("QueueUrl"), f.get("ReceiptHandle")
	var err *apiError
	if in.VisibilityTimeout, err = f.optInt("VisibilityTimeout"); err != nil {
		return err
	}
	return nil
}

func changeMessageVisibility(s *Server, c *call, in *changeVisibilityInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if in.ReceiptHandle == "" {
		return nil, missing("ReceiptHandle")
	}
	d, aerr := visibilityTimeout(in.VisibilityTimeout)
	if aerr != nil {
		return nil, aerr
	}
	if err := q.Queue.ChangeVisibility(c.ctx, in.ReceiptHandle, d); err != nil {
		return nil, coreError(err)
	}
	return nil, nil
}

// visibilityEntry is one entry of ChangeMessageVisibilityBatch.
type visibilityEntry struct {
	Id                string
	ReceiptHandle     string
	VisibilityTimeout *int
}

type changeVisibilityBatchInput struct {
	QueueUrl string
	Entries  []visibilityEntry

	entriesGiven int // entries a query-protocol form gave, of which it decodes 11 at most; 0 from JSON
}

func (in *changeVisibilityBatchInput) fromQuery(f *form) error {
	in.QueueUrl = f.get("QueueUrl")
	const prefix = "ChangeMessageVisibilityBatchRequestEntry"
	ns, given := f.indices(prefix, fifoq.MaxBatchEntries+1)
	in.entriesGiven = given
	for _, n := range ns {
		p := prefix + "." + strconv.Itoa(n) + "."
		e := visibilityEntry{Id: f.get(p + "Id"), ReceiptHandle: f.get(p + "ReceiptHandle")}
		var err *apiError
		if e.VisibilityTimeout, err = f.optInt(p + "VisibilityTimeout"); err != nil {
			return err
		}
		in.Entries = append(in.Entries, e)
	}
	return nil
}

func changeMessageVisibilityBatch(s *Server, c *call, in *changeVisibilityBatchInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(in.entriesGiven, in.Entries); err != nil {
		return nil, err
	}
	out := &idBatchOutput{entry: "ChangeMessageVisibilityBatchResultEntry"}
	var changeBuf [fifoq.MaxBatchEntries]fifoq.VisibilityChange
	var indexBuf [fifoq.MaxBatchEntries]int
	changes, index := changeBuf[:0], indexBuf[:0]
	for i, e := range in.Entries {
		if e.ReceiptHandle == "" {
			out.failed = append(out.failed, failedEntry{i, e.Id, missing("ReceiptHandle")})
			continue
		}
		d, aerr := visibilityTimeout(e.VisibilityTimeout)
		if aerr != nil {
			out.failed = append(out.failed, failedEntry{i, e.Id, aerr})
			continue
		}
		changes, index = append(changes, fifoq.VisibilityChange{ReceiptHandle: e.ReceiptHandle, Timeout: d}), append(index, i)
	}
	if len(changes) > 0 || len(in.Entries) == 0 { // fifoq refuses an empty batch
		err := q.Queue.ChangeVisibilityBatch(c.ctx, changes)
		if err := out.settle(err, index, func(i int) string { return in.Entries[i].Id }); err != nil {
			return nil, err
		}
	}
	sortFailed(out.failed)
	return out, nil
}
