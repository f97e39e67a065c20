package sqsapi

import (
	"strconv"

	"github.com/fifoq/fifoq"
)

// DeleteMessage and DeleteMessageBatch.

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
	if err := q.Delete(c.ctx, in.ReceiptHandle); err != nil {
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
		err := q.DeleteBatch(c.ctx, handles)
		if err := out.settle(err, index, func(i int) string { return in.Entries[i].Id }); err != nil {
			return nil, err
		}
	}
	sortFailed(out.failed)
	return out, nil
}
