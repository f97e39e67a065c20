package fifoq_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fifoq/fifoq"
)

// inSend sends n messages to q, in groups g0..g(groups-1) on a FIFO queue, and returns their ids.
func inSend(t require.TestingT, q *fifoq.Queue, n, groups int) []string {
	ids := make([]string, n)
	for i := range n {
		m := fifoq.Message{Body: fmt.Sprintf("m%d", i)}
		if q.FIFO() {
			m.GroupID, m.DeduplicationID = fmt.Sprintf("g%d", i%groups), fmt.Sprintf("d%d", i)
		}
		r, err := q.Send(context.Background(), m)
		require.NoError(t, err)
		ids[i] = r.MessageID
	}
	return ids
}

// inWalk pages through q with pages of n and returns the ids it saw, page by page.
func inWalk(t require.TestingT, q *fifoq.Queue, n int, f fifoq.MessageFilter) []string {
	var ids []string
	cursor := ""
	for {
		page, next, err := q.MessagesAfter(cursor, n, f)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), n)
		for _, s := range page {
			ids = append(ids, s.MessageID)
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
}

func inAll(q *fifoq.Queue, f fifoq.MessageFilter) []string {
	var ids []string
	for s := range q.Messages() {
		if (f.State == 0 || s.State == f.State) && (f.GroupID == "" || s.GroupID == f.GroupID) {
			ids = append(ids, s.MessageID)
		}
	}
	return ids
}

func TestMessagesAfterPages(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"std", "q.fifo"} {
		q, err := fifoq.New(name, fifoq.WithVisibilityTimeout(time.Hour))
		require.NoError(t, err)
		ids := inSend(t, q, 9000, 3) // more than the scan budget, so pages let the lock go
		_, err = q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
		require.Equal(t, ids, inWalk(t, q, 1000, fifoq.MessageFilter{}), "%s: every message, in order", name)
		require.Equal(t, ids, inWalk(t, q, 7, fifoq.MessageFilter{}), "%s: pages of 7", name)
		inFlight := fifoq.MessageFilter{State: fifoq.StateInFlight}
		require.Len(t, inWalk(t, q, 3, inFlight), 10, "%s: the received messages", name)
		require.Equal(t, inAll(q, inFlight), inWalk(t, q, 3, inFlight), name)
		if q.FIFO() {
			g1 := fifoq.MessageFilter{GroupID: "g1"}
			require.Len(t, inWalk(t, q, 1000, g1), 3000, "group g1")
			require.Equal(t, inAll(q, g1), inWalk(t, q, 1000, g1))
			require.Empty(t, inWalk(t, q, 5, fifoq.MessageFilter{GroupID: "nope"}), "a group with no messages")
		}
	}
}

// A cursor whose message is gone, far into a long queue: the walk starts again from the front and skips to
// it, letting the lock go on the way, and returns what follows the cursor's message.
func TestMessagesAfterGoneCursorFarIn(t *testing.T) {
	t.Parallel()
	q, err := fifoq.New("far")
	require.NoError(t, err)
	ids := inSend(t, q, 10_000, 1)
	var page []fifoq.Snapshot
	cursor := ""
	for range 9 {
		page, cursor, err = q.MessagesAfter(cursor, 1000, fifoq.MessageFilter{})
		require.NoError(t, err)
	}
	require.Equal(t, ids[8999], page[999].MessageID, "the cursor names message 8999")
	require.NoError(t, q.Delete(context.Background(), page[999].ReceiptHandle))
	page, next, err := q.MessagesAfter(cursor, 1000, fifoq.MessageFilter{})
	require.NoError(t, err)
	require.Len(t, page, 1000)
	require.Equal(t, ids[9000], page[0].MessageID, "resumes after the deleted cursor message")
	require.Empty(t, next)
}

func TestMessagesAfterBadInput(t *testing.T) {
	t.Parallel()
	std, err := fifoq.New("std")
	require.NoError(t, err)
	fifo, err := fifoq.New("f.fifo")
	require.NoError(t, err)
	inSend(t, std, 3, 1)
	inSend(t, fifo, 3, 1)
	_, fifoCursor, err := fifo.MessagesAfter("", 1, fifoq.MessageFilter{})
	require.NoError(t, err)
	require.NotEmpty(t, fifoCursor)
	for _, tc := range []struct {
		name   string
		q      *fifoq.Queue
		cursor string
		n      int
		f      fifoq.MessageFilter
	}{
		{"n 0", std, "", 0, fifoq.MessageFilter{}},
		{"n 1001", std, "", 1001, fifoq.MessageFilter{}},
		{"garbage cursor", std, "garbage", 10, fifoq.MessageFilter{}},
		{"handle-length garbage", std, "AAAAAAAAAAAAAAAAAAAAAA", 10, fifoq.MessageFilter{}},
		{"cursor of another queue", std, fifoCursor, 10, fifoq.MessageFilter{}},
		{"state out of range", std, "", 10, fifoq.MessageFilter{State: 4}},
		{"group on a standard queue", std, "", 10, fifoq.MessageFilter{GroupID: "g"}},
	} {
		page, next, err := tc.q.MessagesAfter(tc.cursor, tc.n, tc.f)
		require.ErrorIs(t, err, fifoq.ErrInvalidPage, "%s: got %v", tc.name, err)
		require.Nil(t, page, tc.name)
		require.Empty(t, next, tc.name)
	}
	require.Equal(t, fifoq.Stats{Visible: 3}, std.Stats(), "bad input changes nothing")
}

// A cursor whose message was deleted resumes after it; the snapshots' handles delete and release messages.
func TestMessagesAfterHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	std, err := fifoq.New("std")
	require.NoError(t, err)
	ids := inSend(t, std, 5, 1)
	page, next, err := std.MessagesAfter("", 2, fifoq.MessageFilter{})
	require.NoError(t, err)
	require.Equal(t, ids[:2], []string{page[0].MessageID, page[1].MessageID})
	require.NoError(t, std.Delete(ctx, page[1].ReceiptHandle), "a standard queue deletes a visible message by its handle")
	page, _, err = std.MessagesAfter(next, 10, fifoq.MessageFilter{})
	require.NoError(t, err)
	require.Len(t, page, 3, "resumes after the deleted cursor message")
	require.Equal(t, ids[2], page[0].MessageID)

	fifo, err := fifoq.New("f.fifo", fifoq.WithVisibilityTimeout(time.Hour))
	require.NoError(t, err)
	inSend(t, fifo, 4, 2)
	page, _, err = fifo.MessagesAfter("", 10, fifoq.MessageFilter{})
	require.NoError(t, err)
	for _, s := range page {
		require.Empty(t, s.ReceiptHandle, "a visible FIFO message has no handle")
	}
	ds, err := fifo.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
	require.NoError(t, err)
	page, _, err = fifo.MessagesAfter("", 10, fifoq.MessageFilter{State: fifoq.StateInFlight})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, ds[0].ReceiptHandle, page[0].ReceiptHandle, "the handle of the latest receive")
	require.NoError(t, fifo.ChangeVisibility(ctx, page[0].ReceiptHandle, 0))
	require.Equal(t, fifoq.Stats{Visible: 4}, fifo.Stats())
}

func TestBlockedGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	q, err := fifoq.New("b.fifo", fifoq.WithVisibilityTimeout(time.Hour), fifoq.WithClock(clk))
	require.NoError(t, err)
	inSend(t, q, 6, 3) // g0: m0 m3, g1: m1 m4, g2: m2 m5
	require.Empty(t, q.BlockedGroups(10), "nothing in flight")
	first, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1}) // m0 of g0
	require.NoError(t, err)
	clk.Advance(time.Second)
	second, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 2}) // m1, m4 of g1
	require.NoError(t, err)
	require.Equal(t, []string{"m1", "m4"}, []string{second[0].Body, second[1].Body})
	bs := q.BlockedGroups(10)
	require.Len(t, bs, 2)
	require.Equal(t, "g0", bs[0].GroupID, "blocked longest first")
	require.Equal(t, 2, bs[0].Messages)
	require.Equal(t, first[0].ReceiptHandle, bs[0].InFlight[0].ReceiptHandle)
	require.Equal(t, "g1", bs[1].GroupID)
	require.Equal(t, []string{"m1", "m4"}, []string{bs[1].InFlight[0].Body, bs[1].InFlight[1].Body}, "in send order")
	require.Len(t, q.BlockedGroups(1), 1, "at most n")
	require.NoError(t, q.Delete(ctx, bs[0].InFlight[0].ReceiptHandle), "the handle releases the group")
	require.Equal(t, []string{"g1"}, []string{q.BlockedGroups(10)[0].GroupID})
	std, err := fifoq.New("std")
	require.NoError(t, err)
	inSend(t, std, 1, 1)
	_, err = std.Receive(ctx, fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.Nil(t, std.BlockedGroups(10), "standard queues have no groups")
}

// A walk of the cursors, with messages received, deleted and sent between pages, returns no message twice,
// keeps the queue's order, and returns every message that stayed stored and selected throughout.
func TestMessagesAfterProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		name := rapid.SampledFrom([]string{"p", "p.fifo"}).Draw(t, "queue")
		q, err := fifoq.New(name, fifoq.WithVisibilityTimeout(time.Hour))
		require.NoError(t, err)
		inSend(t, q, rapid.IntRange(0, 60).Draw(t, "messages"), rapid.IntRange(1, 4).Draw(t, "groups"))
		for range rapid.IntRange(0, 5).Draw(t, "receives") {
			_, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 3})
			require.NoError(t, err)
		}
		f := fifoq.MessageFilter{State: fifoq.MessageState(rapid.IntRange(0, 3).Draw(t, "state"))}
		if q.FIFO() && rapid.Bool().Draw(t, "by group") {
			f.GroupID = rapid.SampledFrom([]string{"g0", "g1", "g9"}).Draw(t, "group")
		}
		order := inAll(q, fifoq.MessageFilter{}) // every message's place
		pos := make(map[string]int, len(order))
		for i, id := range order {
			pos[id] = i
		}
		kept := map[string]bool{} // selected at the start and never touched
		for _, id := range inAll(q, f) {
			kept[id] = true
		}
		var seen []string
		cursor := ""
		for steps := 0; ; steps++ {
			page, next, err := q.MessagesAfter(cursor, rapid.IntRange(1, 8).Draw(t, "n"), f)
			require.NoError(t, err)
			for _, s := range page {
				seen = append(seen, s.MessageID)
			}
			if next == "" {
				break
			}
			cursor = next
			switch rapid.IntRange(0, 4).Draw(t, "between pages") {
			case 4: // delete the cursor's message: the last of the page
				if s := page[len(page)-1]; s.ReceiptHandle != "" {
					require.NoError(t, q.Delete(ctx, s.ReceiptHandle))
					delete(kept, s.MessageID)
				}
			case 1: // delete a message, maybe the cursor's
				snaps, _, err := q.MessagesAfter("", 1000, fifoq.MessageFilter{})
				require.NoError(t, err)
				if len(snaps) == 0 {
					break
				}
				s := rapid.SampledFrom(snaps).Draw(t, "victim")
				if s.ReceiptHandle == "" {
					break
				}
				require.NoError(t, q.Delete(ctx, s.ReceiptHandle))
				delete(kept, s.MessageID)
			case 2: // send one more: it may or may not be returned
				inSend(t, q, 1, 1)
			}
		}
		for i := 1; i < len(seen); i++ {
			a, aok := pos[seen[i-1]]
			b, bok := pos[seen[i]]
			if aok && bok {
				require.Less(t, a, b, "order kept and no message twice: %v", seen)
			}
		}
		require.Len(t, seen, len(slices.Compact(slices.Clone(seen))))
		for id := range kept {
			require.Contains(t, seen, id, "a message stored and selected throughout")
		}
	})
}

// BenchmarkMessagesPage reads a page of 50 messages from the middle of a long queue: with MessagesAfter
// from a cursor, and, as the baseline, by walking Messages to the same place.
func BenchmarkMessagesPage(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		q, err := fifoq.New("bench")
		require.NoError(b, err)
		batch := make([]fifoq.Message, 10)
		for i := range batch {
			batch[i] = fifoq.Message{Body: "a message body of some length"}
		}
		for range n / len(batch) {
			_, err := q.SendBatch(context.Background(), batch)
			require.NoError(b, err)
		}
		cursor := ""
		for range n / 2 / 1000 { // the cursor of the middle message
			_, next, err := q.MessagesAfter(cursor, 1000, fifoq.MessageFilter{})
			require.NoError(b, err)
			cursor = next
		}
		b.Run(fmt.Sprintf("MessagesAfter/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, _, err := q.MessagesAfter(cursor, 50, fifoq.MessageFilter{})
				if err != nil || len(page) != 50 {
					b.Fatal(err, len(page))
				}
			}
		})
		b.Run(fmt.Sprintf("Messages/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				i, got := 0, 0
				for range q.Messages() {
					if i++; i > n/2 {
						if got++; got == 50 {
							break
						}
					}
				}
			}
		})
	}
}
