package fifoqweb_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// The console of an SQS server's queues, read-only: those of its catalogue, of every account and region (a
// queue of the default account and region under its name, another under account/region/name).
func ExampleNewCatalog() {
	server := sqsapi.NewServer()
	if _, err := server.DeclareQueue("orders", nil); err != nil {
		log.Fatal(err)
	}
	console := fifoqweb.NewCatalog(server.Catalog(), fifoqweb.WithReadOnly(true))

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

// A console over the catalogue of an SQS server runs its redrives through the catalogue: a redrive started
// in it is one of the server's move tasks, which ListMessageMoveTasks lists and CancelMessageMoveTask
// cancels, and it offers to cancel a redrive started through the server. (The manual clock keeps the
// redrive, at 1 message a second, running.)
func ExampleNewCatalog_redrives() {
	ctx := context.Background()
	server := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(time.Now())))
	if _, err := server.DeclareQueue("orders-dlq", nil); err != nil {
		log.Fatal(err)
	}
	policy := `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":3}`
	if _, err := server.DeclareQueue("orders", map[string]string{"RedrivePolicy": policy}); err != nil {
		log.Fatal(err)
	}
	dlq, _ := server.Queue("orders-dlq")
	for range 3 {
		if _, err := dlq.Send(ctx, fifoq.Message{Body: "failed"}); err != nil {
			log.Fatal(err)
		}
	}
	cat := server.Catalog()
	console := fifoqweb.NewCatalog(cat)

	// A redrive started by the catalogue, as StartMessageMoveTask starts one.
	task, err := cat.StartMoveTask(ctx, dlq.Namespace(), "orders-dlq", "orders", 1)
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
	if _, err := cat.CancelMoveTask(ctx, task.ID); err != nil {
		log.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(cat.MoveTasks(dlq.Namespace(), "orders-dlq")[0].Status().State)
	// Output:
	// the console offers to cancel it: true
	// CANCELLED
}

// redrives is a program's owner of the redrives of its queues, which it starts and cancels itself: a
// fifoqweb.MoveTasks. A redrive's handle is the name of its dead-letter queue.
type redrives struct {
	queues map[string]*fifoq.Queue

	mu      sync.Mutex
	running map[string]*fifoq.MoveTask // by the name of its dead-letter queue
}

// StartMoveTask starts a redrive of the queue source, and returns its handle.
func (r *redrives) StartMoveTask(ctx context.Context, source, destination string, rate int) (string, error) {
	var dest *fifoq.Queue
	if destination != "" {
		dest = r.queues[destination]
	}
	t, err := r.queues[source].StartMoveTask(ctx, dest, rate)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running[source] = t
	return source, nil
}

// CancelMoveTask cancels the redrive and waits until it has ended.
func (r *redrives) CancelMoveTask(ctx context.Context, handle string) error {
	r.mu.Lock()
	t := r.running[handle]
	r.mu.Unlock()
	if t == nil {
		return fifoq.ErrMoveTaskNotRunning
	}
	if err := t.Cancel(); err != nil {
		return err
	}
	return t.Wait(ctx)
}

// RunningMoveTask returns the handle of the running redrive of source, or "".
func (r *redrives) RunningMoveTask(source string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.running[source]; t != nil && t.Status().State == fifoq.MoveTaskRunning {
		return source
	}
	return ""
}

// A console over a program's queues that hands their redrives to the program's own owner of them: a
// redrive started in it is the owner's, and it offers to cancel a redrive the owner started. (The manual
// clock keeps the redrive, at 1 message a second, running.)
func ExampleWithMoveTasks() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(time.Now())
	dlq, err := fifoq.New("orders-dlq", fifoq.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	orders, err := fifoq.New("orders", fifoq.WithClock(clk), fifoq.WithDeadLetterQueue(dlq, 3))
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		if _, err := dlq.Send(ctx, fifoq.Message{Body: "failed"}); err != nil {
			log.Fatal(err)
		}
	}
	owner := &redrives{queues: map[string]*fifoq.Queue{"orders": orders, "orders-dlq": dlq},
		running: make(map[string]*fifoq.MoveTask)}
	console := fifoqweb.New(fifoqweb.Queues(orders, dlq), fifoqweb.WithMoveTasks(owner))

	// A redrive the owner started, from the program's own API.
	handle, err := owner.StartMoveTask(ctx, "orders-dlq", "orders", 1)
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
	fmt.Println("the console offers to cancel it:", strings.Contains(string(page), `name="task" value="orders-dlq"`))
	if err := owner.CancelMoveTask(ctx, handle); err != nil {
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

// A program tells the console's server page what serves it: its version and start, its store and its
// listeners (fifoq serve gives its --data-dir, --sync and addresses).
func ExampleWithServerInfo() {
	orders, err := fifoq.New("orders")
	if err != nil {
		log.Fatal(err)
	}
	started := time.Now()
	console := fifoqweb.New(fifoqweb.Queues(orders), fifoqweb.WithServerInfo(func() fifoqweb.ServerInfo {
		return fifoqweb.ServerInfo{Version: "orders-service 1.4.2", Started: started,
			Listeners: []fifoqweb.Listener{{Name: "admin", Addr: "http://127.0.0.1:8081"}}}
	}))
	defer console.Close()

	srv := httptest.NewServer(console)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/server")
	if err != nil {
		log.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, strings.Contains(string(page), "orders-service 1.4.2"), strings.Contains(string(page), "http://127.0.0.1:8081"))
	// Output: 200 OK true true
}

// A search looks at no more messages than its bound, says where it stopped, and links to going on from
// there; reading changes nothing.
func ExampleWithSearchLimits() {
	orders, err := fifoq.New("orders")
	if err != nil {
		log.Fatal(err)
	}
	for i := range 30 {
		if _, err := orders.Send(context.Background(), fifoq.Message{Body: fmt.Sprintf("order %d", i)}); err != nil {
			log.Fatal(err)
		}
	}
	console := fifoqweb.New(fifoqweb.Queues(orders), fifoqweb.WithSearchLimits(20, 0))
	defer console.Close()

	srv := httptest.NewServer(console)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/search?q=orders&by=body&v=order+25")
	if err != nil {
		log.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(strings.Contains(string(page), "0 found among 20 messages"), strings.Contains(string(page), "Go on from there"))
	fmt.Println(orders.Stats().Visible)
	// Output:
	// true true
	// 30
}
