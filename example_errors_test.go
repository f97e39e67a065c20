package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fifoq/fifoq"
)

// A rejected call returns an error that matches its rule's sentinel, with a Go text; ErrorCode and
// ErrorMessage give the code and the message Amazon SQS answers with, which a wire API passes on.
func ExampleErrorMessage() {
	q, err := fifoq.New("orders.fifo")
	if err != nil {
		panic(err)
	}
	_, err = q.Send(context.Background(), fifoq.Message{Body: "hello", GroupID: "customer 42", DeduplicationID: "1"})
	fmt.Println(errors.Is(err, fifoq.ErrInvalidGroupID))
	fmt.Println(err)
	fmt.Println(fifoq.ErrorCode(err))
	fmt.Println(fifoq.ErrorMessage(err))

	// A batch entry's error is the entry's own.
	_, err = q.SendBatch(context.Background(), []fifoq.Message{
		{Body: "ok", GroupID: "g", DeduplicationID: "2"},
		{Body: "ok", GroupID: "g", DeduplicationID: "3", Delay: 20 * time.Minute},
	})
	var be *fifoq.BatchError
	if errors.As(err, &be) {
		for _, e := range be.Entries {
			fmt.Println(e.Index, fifoq.ErrorCode(e.Err), fifoq.ErrorMessage(e.Err))
		}
	}
	// Output:
	// true
	// fifoq: invalid message group id: "customer 42": only alphanumeric and punctuation characters
	// InvalidParameterValue
	// Value customer 42 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.
	// 1 InvalidParameterValue Value 1200 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.
}
