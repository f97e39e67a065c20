package fifoqweb_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqweb"
	"github.com/fifoq/fifoq/sqsapi"
)

// A service mounts the console on a path of its admin port, over the queues it holds.
func Example() {
	orders, err := fifoq.New("orders")
	if err != nil {
		log.Fatal(err)
	}
	jobs, err := fifoq.New("jobs.fifo")
	if err != nil {
		log.Fatal(err)
	}

	admin := http.NewServeMux()
	console := fifoqweb.New(fifoqweb.Queues(orders, jobs))
	admin.Handle("/queues/", http.StripPrefix("/queues", console))
	// The service serves admin on its admin port, e.g. http.ListenAndServe("127.0.0.1:8081", admin);
	// here a test server stands in for it.
	srv := httptest.NewServer(admin)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/queues/")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output: 200 OK
}

// The console of an SQS server's queues, read-only: the queues of every account and region, under the names
// NamedQueues gives them.
func ExampleNew_sqsapi() {
	server := sqsapi.NewServer()
	if _, err := server.CreateQueue("orders", nil); err != nil {
		log.Fatal(err)
	}
	console := fifoqweb.New(server.NamedQueues, fifoqweb.WithReadOnly(true))

	srv := httptest.NewServer(console)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/purge?q=orders", "application/x-www-form-urlencoded", nil)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output: 403 Forbidden
}

// A console that hands its redrives to the SQS server whose queues it shows: a redrive started in it is one
// of the server's move tasks, which ListMessageMoveTasks lists and CancelMessageMoveTask cancels, and it
// offers to cancel a redrive started through the API. (The manual clock keeps the redrive, at 1 message a
// second, running.)
func ExampleWithMoveTasks() {
	ctx := context.Background()
	server := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(time.Now())))
	dlq, err := server.CreateQueue("orders-dlq", nil)
	if err != nil {
		log.Fatal(err)
	}
	policy := `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":3}`
	if _, err := server.CreateQueue("orders", map[string]string{"RedrivePolicy": policy}); err != nil {
		log.Fatal(err)
	}
	for range 3 {
		if _, err := dlq.Send(ctx, fifoq.Message{Body: "failed"}); err != nil {
			log.Fatal(err)
		}
	}
	console := fifoqweb.New(server.NamedQueues, fifoqweb.WithMoveTasks(server))

	// A redrive started by the server, as StartMessageMoveTask starts one.
	handle, err := server.StartMoveTask(ctx, "orders-dlq", "orders", 1)
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(console)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/queue?q=orders-dlq")
	if err != nil {
		log.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("the console offers to cancel it:", strings.Contains(string(page), "Cancel redrive"))
	if err := server.CancelMoveTask(ctx, handle); err != nil {
		log.Fatal(err)
	}
	fmt.Println(dlq.MoveTasks()[0].State)
	// Output:
	// the console offers to cancel it: true
	// CANCELLED
}

// A console that shows the event source mappings a program runs, on the pages of their queues: the program
// fills in a MappingView for each, at each request (fifoq serve from its lambdaevents.Invokers).
func ExampleWithMappings() {
	orders, err := fifoq.New("orders.fifo")
	if err != nil {
		log.Fatal(err)
	}
	mappings := func() []fifoqweb.MappingView {
		return []fifoqweb.MappingView{{
			Queue:       "orders.fifo",
			FunctionURL: "http://127.0.0.1:9000/2015-03-31/functions/function/invocations",
			BatchSize:   10, Concurrency: 1, FunctionTimeout: 3 * time.Second, Enabled: true,
			Invocations: 42, // from the mapping's metrics
		}}
	}
	console := fifoqweb.New(fifoqweb.Queues(orders), fifoqweb.WithMappings(mappings))

	srv := httptest.NewServer(console)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/queue?q=orders.fifo")
	if err != nil {
		log.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(strings.Contains(string(page), "Event source mappings"), strings.Contains(string(page), `data-f="invocations">42<`))
	// Output: true true
}
