package storage_test

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// syncOnDemand is an engine that implements storage.Syncer over another engine: an engine whose synced
// Tickets return before the disk has the batch would sync its disk in Sync. This one counts the calls.
type syncOnDemand struct {
	storage.Engine
	syncs atomic.Int64
}

// Sync commits an empty batch with a sync and waits for it, which makes every batch before it durable.
func (e *syncOnDemand) Sync() error {
	e.syncs.Add(1)
	t, err := e.Commit(e.NewBatch(), true)
	if err != nil {
		return err
	}
	return t.Wait()
}

// A queue syncs the record of each block of 4096 sequence numbers before it gives out the first of them:
// 5,000 sends take two blocks, and so two calls of Sync.
func ExampleSyncer() {
	mem, err := storagetest.NewDisk().Open()
	if err != nil {
		log.Fatal(err)
	}
	eng := &syncOnDemand{Engine: mem}
	st, err := fifoq.OpenStore(eng, "memory")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	q, err := fifoq.New("orders", fifoq.WithStore(st))
	if err != nil {
		log.Fatal(err)
	}
	for i := range 5000 {
		if _, err := q.Send(context.Background(), fifoq.Message{Body: fmt.Sprint(i)}); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(eng.syncs.Load())
	// Output: 2
}
