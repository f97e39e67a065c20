package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// A catalogue holds named queues with their definitions. Creating a queue again with the same settings
// returns it; with another value of a setting given, it is refused as SQS refuses it.
// exStart is the start time of the manual clocks in these examples; any time would do.
var exStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func ExampleCatalog() {
	ctx := context.Background()
	cat := catalog.New()
	defer cat.Close()
	ns := catalog.Namespace{} // one namespace is all this program needs

	q, err := cat.CreateQueue(ctx, ns, "jobs", catalog.Definition{VisibilityTimeout: time.Minute}, catalog.FieldVisibilityTimeout)
	if err != nil {
		panic(err)
	}
	same, _ := cat.CreateQueue(ctx, ns, "jobs", catalog.Definition{VisibilityTimeout: time.Minute}, catalog.FieldVisibilityTimeout)
	fmt.Println(same == q)

	_, err = cat.CreateQueue(ctx, ns, "jobs", catalog.Definition{VisibilityTimeout: time.Hour}, catalog.FieldVisibilityTimeout)
	fmt.Println(errors.Is(err, catalog.ErrQueueExists), fifoq.ErrorCode(err))
	fmt.Println(fifoq.ErrorMessage(err))

	// A change of the definition goes to the queue.
	err = cat.Update(ctx, ns, "jobs", func(d *catalog.Definition) error {
		d.Apply(catalog.Definition{Delay: 5 * time.Second, Tags: map[string]string{"team": "batch"}}, catalog.FieldDelay|catalog.FieldTags)
		return nil
	})
	if err != nil {
		panic(err)
	}
	d, _ := cat.Definition(ns, "jobs")
	fmt.Println(d.Delay, d.Tags)
	// Output:
	// true
	// true QueueAlreadyExists
	// A queue already exists with the same name and a different value for attribute VisibilityTimeout
	// 5s map[team:batch]
}

// Deleting a dead-letter queue leaves the redrive policies of its sources pending, as on SQS; a queue
// created again with its name takes them back.
func ExampleCatalog_DeleteQueue() {
	ctx := context.Background()
	clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cat := catalog.New(catalog.WithClock(clock))
	defer cat.Close()
	ns := catalog.Namespace{Account: "000000000000", Region: "us-east-1"}

	if _, err := cat.CreateQueue(ctx, ns, "orders-dlq", catalog.Definition{}, 0); err != nil {
		panic(err)
	}
	policy := catalog.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 3}
	if _, err := cat.CreateQueue(ctx, ns, "orders", catalog.Definition{RedrivePolicy: policy}, catalog.FieldRedrivePolicy); err != nil {
		panic(err)
	}

	if err := cat.DeleteQueue(ctx, ns, "orders-dlq"); err != nil {
		panic(err)
	}
	d, _ := cat.Definition(ns, "orders")
	fmt.Printf("%+v\n", d.RedrivePolicy)
	_, err := cat.CreateQueue(ctx, ns, "orders-dlq", catalog.Definition{}, 0)
	fmt.Println(fifoq.ErrorMessage(err))

	clock.Advance(time.Minute)
	if _, err := cat.CreateQueue(ctx, ns, "orders-dlq", catalog.Definition{}, 0); err != nil {
		panic(err)
	}
	d, _ = cat.Definition(ns, "orders")
	fmt.Printf("%+v\n", d.RedrivePolicy)
	// Output:
	// {DeadLetterQueue:orders-dlq MaxReceiveCount:3 Pending:true}
	// You must wait 60 seconds after deleting a queue before you can create another with the same name.
	// {DeadLetterQueue:orders-dlq MaxReceiveCount:3 Pending:false}
}

// A catalogue opened on a store keeps its queues, their definitions and their messages over a restart.
// (A program opens its store with durable.Open; this one uses the in-memory engine of package storagetest,
// whose disk outlives it.)
func ExampleOpen() {
	ctx := context.Background()
	disk := storagetest.NewDisk()
	open := func() (*fifoq.Store, *catalog.Catalog) {
		eng, err := disk.Open()
		if err != nil {
			panic(err)
		}
		st, err := fifoq.OpenStore(eng, "disk")
		if err != nil {
			panic(err)
		}
		cat, err := catalog.Open(st)
		if err != nil {
			panic(err)
		}
		return st, cat
	}

	st, cat := open()
	q, err := cat.CreateQueue(ctx, catalog.Namespace{}, "jobs", catalog.Definition{Tags: map[string]string{"team": "batch"}}, catalog.FieldTags)
	if err != nil {
		panic(err)
	}
	if _, err := q.Send(ctx, fifoq.Message{Body: "hello", TraceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793"}); err != nil {
		panic(err)
	}
	cat.Close() // pauses the move tasks, if any: a reopened catalogue resumes them
	st.Close()

	st, cat = open()
	defer st.Close()
	defer cat.Close()
	d, _ := cat.Definition(catalog.Namespace{}, "jobs")
	jobs, _ := cat.Queue(catalog.Namespace{}, "jobs")
	ds, err := jobs.Receive(ctx, fifoq.ReceiveOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Tags, ds[0].Body, ds[0].TraceHeader)
	// Output:
	// map[team:batch] hello Root=1-5759e988-bd862e3fe1be46a994272793
}

// A tiny service built on a catalogue, as package sqsapi builds the SQS API on one: each account (here
// the X-Account header) has its own queues; PUT creates a queue, POST sends a message to it, GET receives
// and deletes one, DELETE deletes the queue. The catalogue's errors carry the codes and messages SQS
// answers with, which a service passes on.
func Example_service() {
	cat := catalog.New()
	defer cat.Close()
	nsOf := func(r *http.Request) catalog.Namespace { return catalog.Namespace{Account: r.Header.Get("X-Account")} }
	fail := func(w http.ResponseWriter, err error) {
		code := http.StatusBadRequest
		if fifoq.ErrorCode(err) == "" {
			code = http.StatusInternalServerError
		}
		http.Error(w, fifoq.ErrorCode(err)+": "+fifoq.ErrorMessage(err), code)
	}
	queue := func(w http.ResponseWriter, r *http.Request) (catalog.Queue, bool) {
		q, ok := cat.Queue(nsOf(r), r.PathValue("name"))
		if !ok {
			fail(w, catalog.ErrQueueDoesNotExist)
		}
		return q, ok
	}

	mux := http.NewServeMux()
	mux.HandleFunc("PUT /queues/{name}", func(w http.ResponseWriter, r *http.Request) {
		if _, err := cat.CreateQueue(r.Context(), nsOf(r), r.PathValue("name"), catalog.Definition{}, 0); err != nil {
			fail(w, err)
		}
	})
	mux.HandleFunc("DELETE /queues/{name}", func(w http.ResponseWriter, r *http.Request) {
		if err := cat.DeleteQueue(r.Context(), nsOf(r), r.PathValue("name")); err != nil {
			fail(w, err)
		}
	})
	mux.HandleFunc("POST /queues/{name}", func(w http.ResponseWriter, r *http.Request) {
		q, ok := queue(w, r)
		if !ok {
			return
		}
		body, _ := io.ReadAll(r.Body)
		if _, err := q.Send(r.Context(), fifoq.Message{Body: string(body)}); err != nil {
			fail(w, err)
		}
	})
	mux.HandleFunc("GET /queues/{name}", func(w http.ResponseWriter, r *http.Request) {
		q, ok := queue(w, r)
		if !ok {
			return
		}
		ds, err := q.Receive(r.Context(), fifoq.ReceiveOptions{})
		if err == nil && len(ds) > 0 {
			err = q.Delete(r.Context(), ds[0].ReceiptHandle)
			fmt.Fprint(w, ds[0].Body)
		}
		if err != nil {
			fail(w, err)
		}
	})

	do := func(method, account, path, body string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("X-Account", account)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %s %s: %d %s", account, method, path, w.Code, w.Body.String())))
	}
	do("PUT", "alice", "/queues/jobs", "")
	do("POST", "alice", "/queues/jobs", "hello")
	do("GET", "bob", "/queues/jobs", "")
	do("GET", "alice", "/queues/jobs", "")
	do("DELETE", "alice", "/queues/jobs", "")
	do("PUT", "alice", "/queues/jobs", "")
	do("PUT", "alice", "/queues/no.such.name", "")
	// Output:
	// alice PUT /queues/jobs: 200
	// alice POST /queues/jobs: 200
	// bob GET /queues/jobs: 400 AWS.SimpleQueueService.NonExistentQueue: The specified queue does not exist.
	// alice GET /queues/jobs: 200 hello
	// alice DELETE /queues/jobs: 200
	// alice PUT /queues/jobs: 400 AWS.SimpleQueueService.QueueDeletedRecently: You must wait 60 seconds after deleting a queue before you can create another with the same name.
	// alice PUT /queues/no.such.name: 400 InvalidParameterValue: Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length
}
