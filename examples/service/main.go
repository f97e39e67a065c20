// Command service is a small order service built on fifoq, meant to be copied as the start of a real one:
//
//   - a durable FIFO work queue on a directory (orders.fifo), one message group per account, so each
//     account's orders are handled in the order they came, and different accounts in parallel;
//   - its dead-letter queue (orders-dlq.fifo), where an order goes after it failed maxReceiveCount times;
//   - a Consumer that hands the orders of a batch to the handler one at a time (fifoq.PerMessage), so a
//     poison order fails alone instead of taking its batch with it;
//   - POST /orders to take orders, GET /metrics for Prometheus, JSON logs on standard output;
//   - a clean stop on SIGTERM or Ctrl-C: no new orders, the batches in flight finish, the store closes last.
//
// Run it with demo orders. One of them is poison: it is refused 5 times, then moves to the dead-letter queue
// at the consumer's next receive (within its 20 s long poll, or at once when an order comes):
//
//	go run ./examples/service
//	curl -d '{"id":"o-1","account":"alice","amount":1250}' http://127.0.0.1:9090/orders
//	curl http://127.0.0.1:9090/metrics
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/fifoqprom"
)

const (
	maxReceiveCount   = 5                // tries before an order goes to the dead-letter queue
	visibilityTimeout = 30 * time.Second // how long a received order stays hidden from other consumers
	handlerTimeout    = 10 * time.Second // the most one batch may take; below the visibility timeout
)

func main() {
	// SIGTERM (a container stop, systemd) and Ctrl-C cancel ctx; run then drains and returns.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// order is the body of a message of orders.fifo, as POST /orders takes it.
type order struct {
	ID      string `json:"id"`      // the deduplication id: an order sent twice within 5 minutes is stored once
	Account string `json:"account"` // the message group: one account's orders are handled in order
	Amount  int    `json:"amount"`  // in cents; not positive is an order no retry can fix (a poison order)
}

// run is the whole service: it serves until ctx is done, then stops cleanly and returns.
func run(ctx context.Context, args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	dataDir := fs.String("data-dir", filepath.Join(os.TempDir(), "fifoq-service"), "directory of the durable queues")
	addr := fs.String("addr", "127.0.0.1:9090", "address of POST /orders and GET /metrics")
	demo := fs.Int("demo", 6, "demo orders to send at start, the last one poison (0 for none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stdout, nil))

	// The store first, closed last: after the consumer and the HTTP server have stopped using the queues.
	st, err := durable.Open(*dataDir, durable.WithLogger(logger))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	q, dlq, err := openQueues(logger, fifoq.WithStore(st))
	if err != nil {
		return err
	}
	p := newProcessor(logger)
	c, err := fifoq.NewConsumer(q, fifoq.PerMessage(p.handle), consumerOptions(logger))
	if err != nil {
		return err
	}

	// Prometheus: the queues' depths and counters, and the consumer's batches, on a registry of our own.
	col := fifoqprom.NewCollector(fifoqprom.WithStore(st)) // and the health of the store: fifoq_store_*
	col.AddQueue(q)
	col.AddQueue(dlq)
	col.AddConsumer("orders", c)
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("POST /orders", func(w http.ResponseWriter, r *http.Request) {
		var o order
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&o); err != nil || o.ID == "" || o.Account == "" {
			http.Error(w, `want {"id": "...", "account": "...", "amount": cents}`, http.StatusBadRequest)
			return
		}
		res, err := send(r.Context(), q, o)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted) // stored on disk: it will be handled, even after a crash
		_ = json.NewEncoder(w).Encode(map[string]any{"message_id": res.MessageID, "duplicate": res.Duplicate})
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("listening", "addr", ln.Addr().String(), "data_dir", *dataDir)

	if err := sendDemo(ctx, q, *demo); err != nil {
		return err
	}

	// Run handles batches until ctx is done, then waits for the batches in flight. Then the HTTP server
	// stops taking orders and finishes the requests it has; an order it accepts meanwhile is on disk and
	// is handled at the next start.
	runErr := c.Run(ctx)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = errors.Join(runErr, srv.Shutdown(shutdownCtx))
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	s := q.Stats()
	logger.Info("stopped", "processed", p.processed(), "left_in_queue", s.Visible+s.InFlight+s.Delayed,
		"in_dead_letter_queue", dlq.Stats().Visible)
	return err
}

// openQueues opens the work queue and its dead-letter queue with opts (the store, in main). Opening a
// queue that the store holds recovers its messages.
func openQueues(logger *slog.Logger, opts ...fifoq.Option) (q, dlq *fifoq.Queue, err error) {
	// A dead-letter queue exists before its sources; a FIFO queue's must be FIFO too.
	dlq, err = fifoq.New("orders-dlq.fifo", append(opts, fifoq.WithRetention(14*24*time.Hour))...)
	if err != nil {
		return nil, nil, err
	}
	q, err = fifoq.New("orders.fifo", append(opts,
		fifoq.WithVisibilityTimeout(visibilityTimeout),
		fifoq.WithDeadLetterQueue(dlq, maxReceiveCount),
		fifoq.WithLogger(logger))...) // logs each move to the dead-letter queue
	return q, dlq, err
}

// consumerOptions configure the consumer of the work queue.
func consumerOptions(logger *slog.Logger) fifoq.ConsumerOptions {
	return fifoq.ConsumerOptions{
		Batch:          fifoq.BatchOptions{Size: 10},
		MaxConcurrency: 4, // batches at once; a group is never in two
		HandlerTimeout: handlerTimeout,
		// A failed order comes back at once, so the demo's poison order reaches the dead-letter queue in
		// a moment. Leave it out to space the tries by the visibility timeout, as Lambda does.
		RetryImmediately: true,
		Logger:           logger, // a record per batch that failed (Warn); Debug for the others
	}
}

// send stores o in q: its account is its group, its id its deduplication id.
func send(ctx context.Context, q *fifoq.Queue, o order) (fifoq.SendResult, error) {
	body, err := json.Marshal(o)
	if err != nil {
		return fifoq.SendResult{}, err
	}
	return q.Send(ctx, fifoq.Message{Body: string(body), GroupID: o.Account, DeduplicationID: o.ID})
}

// sendDemo sends n demo orders over three accounts, the last one with amount 0: a poison order.
func sendDemo(ctx context.Context, q *fifoq.Queue, n int) error {
	run := time.Now().UnixNano() // new ids on each start, which deduplication would drop otherwise
	accounts := []string{"alice", "bob", "carol"}
	for i := range n {
		o := order{ID: fmt.Sprintf("demo-%d-%d", run, i+1), Account: accounts[i%len(accounts)], Amount: 100 * (i + 1)}
		if i == n-1 {
			o.Account, o.Amount = "mallory", 0
		}
		if _, err := send(ctx, q, o); err != nil {
			return err
		}
	}
	return nil
}

// errPoison is the failure of an order that no retry can fix.
var errPoison = errors.New("invalid order")

// processor is the business logic: here it adds up each account's orders. It must be idempotent in a real
// service (an order can be delivered twice, after a crash between the work and the delete): see
// fifoq/idempotency.
type processor struct {
	logger *slog.Logger
	mu     sync.Mutex
	totals map[string]int // account: cents ordered
	count  int
}

func newProcessor(logger *slog.Logger) *processor {
	return &processor{logger: logger, totals: make(map[string]int)}
}

// handle handles one order. An error fails this order alone; PerMessage keeps the later orders of its
// account in the batch for the retry, so an account's orders are never handled out of order.
func (p *processor) handle(ctx context.Context, d fifoq.Delivery) error {
	var o order
	if err := json.Unmarshal([]byte(d.Body), &o); err != nil {
		return fmt.Errorf("%w: %v", errPoison, err)
	}
	if o.Amount <= 0 {
		p.logger.Warn("order refused", "id", o.ID, "account", o.Account, "amount", o.Amount, "try", d.ReceiveCount)
		return fmt.Errorf("%w: amount %d", errPoison, o.Amount)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.totals[o.Account] += o.Amount
	p.count++
	p.logger.Info("order processed", "id", o.ID, "account", o.Account, "amount", o.Amount,
		"account_total", p.totals[o.Account])
	return nil
}

// processed returns how many orders were processed.
func (p *processor) processed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}
