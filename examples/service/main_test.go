package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/fifoqtest"
)

// TestHandle runs the handler on the queues and consumer options of the service, in a synctest bubble
// (time is virtual: no handler can miss its timeout on a slow machine). Three accounts' orders,
// interleaved, are each handled once and in order; the poison order is in the dead-letter queue after
// maxReceiveCount tries, without holding up the orders of the other accounts or sending any of them
// there; the totals add up; and nothing is left in the work queue.
func TestHandle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger := slog.New(slog.DiscardHandler)
		q, dlq, err := openQueues(logger)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{} // account: bodies in send order
		var poison string
		for i := range 12 {
			o := order{ID: fmt.Sprint("o-", i), Account: []string{"alice", "bob", "carol"}[i%3], Amount: 100 + i}
			if i == 4 {
				o = order{ID: "o-4", Account: "mallory", Amount: -5}
			}
			body, _ := json.Marshal(o)
			fifoqtest.Send(t, q, fifoq.Message{Body: string(body), GroupID: o.Account, DeduplicationID: o.ID})
			want[o.Account] = append(want[o.Account], string(body))
			if o.Amount <= 0 {
				poison = string(body)
			}
		}

		p := newProcessor(logger)
		res := fifoqtest.Drain(t, q, fifoq.PerMessage(p.handle), fifoqtest.DrainOptions{Consumer: consumerOptions(logger)})

		fifoqtest.RequireDeliveredInOrder(t, res, want)
		fifoqtest.RequireInDLQ(t, dlq, map[string]int{poison: maxReceiveCount})
		fifoqtest.RequireEmpty(t, q)
		wantTotals := map[string]int{"alice": 100 + 103 + 106 + 109, "bob": 101 + 107 + 110, "carol": 102 + 105 + 108 + 111}
		if fmt.Sprint(p.totals) != fmt.Sprint(wantTotals) || p.processed() != 11 {
			t.Errorf("totals %v after %d orders, want %v after 11: each sound order once", p.totals, p.processed(), wantTotals)
		}
	})
}

// TestRun runs the service as main does, on a temporary directory: it posts orders over HTTP, then cancels
// ctx, as SIGTERM does. run returns without error, and the directory, opened again, holds every order whose
// POST was acknowledged and that the service did not log as processed: none is lost. (An order may be both,
// if a stalled machine let a handler time out after it processed it: delivery is at least once.) There is
// no time limit: every wait is for an event (a log line, a response, run's return).
func TestRun(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	logs, logw := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- run(ctx, []string{"-data-dir", dir, "-addr", "127.0.0.1:0", "-demo", "0"}, logw)
		logw.Close()
	}()

	// The logs: the address, then one record per processed order, until run returns.
	addr := make(chan string, 1)
	processed := make(chan map[string]int, 1)
	go func() {
		seen := map[string]int{}
		defer func() { processed <- seen }()
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			var rec struct{ Msg, Addr, ID string }
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Errorf("a log line that is not JSON: %s", sc.Bytes())
				continue
			}
			switch rec.Msg {
			case "listening":
				addr <- rec.Addr
			case "order processed":
				seen[rec.ID]++
			}
		}
	}()
	url := "http://" + <-addr + "/orders"

	acked := map[string]bool{}
	for i := range 20 {
		id := fmt.Sprint("o-", i)
		body := fmt.Sprintf(`{"id":%q,"account":"acct-%d","amount":%d}`, id, i%4, 100+i)
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: status %d", body, resp.StatusCode)
		}
		acked[id] = true
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"amount":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("POST of an order without id and account: status %d, want 400", resp.StatusCode)
	}

	cancel() // SIGTERM
	if err := <-ran; err != nil {
		t.Fatalf("run: %v", err)
	}
	seen := <-processed

	// Opened again: what the service did not process is still stored, none of it twice.
	st, err := durable.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, dlq, err := openQueues(slog.New(slog.DiscardHandler), fifoq.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, x := range []*fifoq.Queue{q, dlq} {
		for m := range x.Messages() {
			var o order
			if err := json.Unmarshal([]byte(m.Body), &o); err != nil {
				t.Fatal(err)
			}
			stored[o.ID]++
		}
	}
	for id := range acked {
		if seen[id] == 0 && stored[id] == 0 {
			t.Errorf("order %s was acknowledged, then neither processed nor stored: lost", id)
		}
		if stored[id] > 1 {
			t.Errorf("order %s is stored %d times", id, stored[id])
		}
	}
	for id := range stored {
		if !acked[id] {
			t.Errorf("order %s is stored but was never posted", id)
		}
	}
	t.Logf("%d orders acknowledged: %d processed before the stop, %d stored for the next start", len(acked), len(seen), len(stored))
}
