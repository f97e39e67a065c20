package fifoqweb_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

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
