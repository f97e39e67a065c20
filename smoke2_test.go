package fifoq

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestSmokeLongPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New("a.fifo", WithContentBasedDeduplication())
		start := time.Now()
		ds, err := q.Receive(ctx, ReceiveOptions{WaitTime: 20 * time.Second})
		if len(ds) != 0 || err != nil || time.Since(start) != 20*time.Second {
			t.Fatalf("empty wait: %v %v %v", ds, err, time.Since(start))
		}
		start = time.Now()
		go func() {
			time.Sleep(5 * time.Second)
			q.Send(ctx, Message{Body: "x", GroupID: "g"})
		}()
		ds, err = q.Receive(ctx, ReceiveOptions{WaitTime: 20 * time.Second, VisibilityTimeout: 3 * time.Second})
		if len(ds) != 1 || time.Since(start) != 5*time.Second {
			t.Fatalf("send wake: %v %v %v", ds, err, time.Since(start))
		}
		start = time.Now()
		ds, err = q.Receive(ctx, ReceiveOptions{WaitTime: 20 * time.Second})
		if len(ds) != 1 || time.Since(start) != 3*time.Second || ds[0].ReceiveCount != 2 {
			t.Fatalf("vt wake: %v %v %v", ds, err, time.Since(start))
		}
		cctx, cancel := context.WithCancel(ctx)
		go func() { time.Sleep(time.Second); cancel() }()
		start = time.Now()
		ds, err = q.Receive(cctx, ReceiveOptions{WaitTime: 20 * time.Second})
		if err != context.Canceled || time.Since(start) != time.Second {
			t.Fatalf("cancel: %v %v %v", ds, err, time.Since(start))
		}
	})
}
