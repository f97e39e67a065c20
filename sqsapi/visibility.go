package sqsapi

import (
	"strconv"
	"time"

	"github.com/fifoq/fifoq"
)

// ChangeMessageVisibility and ChangeMessageVisibilityBatch.

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
	if err := q.ChangeVisibility(c.ctx, in.ReceiptHandle, d); err != nil {
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
		err := q.ChangeVisibilityBatch(c.ctx, changes)
		if err := out.settle(err, index, func(i int) string { return in.Entries[i].Id }); err != nil {
			return nil, err
		}
	}
	sortFailed(out.failed)
	return out, nil
}
