package conformance_test

// SDK tests of GetQueueAttributes and SetQueueAttributes.

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

func TestSdGetQueueAttributes(t *testing.T) {
	t.Parallel()

	t.Run("each attribute", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		std := e.create("sd-ga", nil)
		fifo := e.create("sd-ga.fifo", sdKV("FifoQueue", "true"))
		created := sdSeconds(sdStart)
		common := sdKV("VisibilityTimeout", "30", "MaximumMessageSize", "1048576", "MessageRetentionPeriod", "345600",
			"DelaySeconds", "0", "ReceiveMessageWaitTimeSeconds", "0", "ApproximateNumberOfMessages", "0",
			"ApproximateNumberOfMessagesNotVisible", "0", "ApproximateNumberOfMessagesDelayed", "0",
			"CreatedTimestamp", created, "LastModifiedTimestamp", created)
		for url, want := range map[string]map[string]string{
			std:  maps.Clone(common),
			fifo: maps.Clone(common),
		} {
			if url == std {
				want["QueueArn"] = sdArn("sd-ga")
			} else {
				want["QueueArn"] = sdArn("sd-ga.fifo")
				maps.Copy(want, sdKV("FifoQueue", "true", "ContentBasedDeduplication", "false",
					"DeduplicationScope", "queue", "FifoThroughputLimit", "perQueue"))
			}
			for name, v := range want {
				got := e.attrs(url, types.QueueAttributeName(name))
				require.Equal(t, map[string]string{name: v}, got, "GetQueueAttributes %s of %s", name, url)
			}
			all := e.attrs(url, types.QueueAttributeNameAll)
			for name, v := range want {
				require.Equal(t, v, all[name], "All: %s of %s", name, url)
			}
			if url == std {
				for _, name := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"} {
					require.NotContains(t, all, name, "All of a standard queue")
				}
			}
			for _, name := range []string{"RedrivePolicy", "RedriveAllowPolicy", "Policy"} {
				if v, ok := all[name]; ok && name == "RedriveAllowPolicy" {
					require.JSONEq(t, `{"redrivePermission":"allowAll"}`, v, "the default RedriveAllowPolicy (6.7)")
					continue
				}
				require.NotContains(t, all, name, "All, with no %s set", name)
			}
			two := e.attrs(url, types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameQueueArn)
			require.Equal(t, map[string]string{"VisibilityTimeout": "30", "QueueArn": want["QueueArn"]}, two)
		}
	})

	t.Run("timestamps", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-ts", nil)
		e.clk.Advance(100 * time.Second)
		require.NoError(t, e.setAttrs(url, sdKV("VisibilityTimeout", "31")))
		all := e.attrs(url, types.QueueAttributeNameAll)
		require.Equal(t, sdSeconds(sdStart), all["CreatedTimestamp"], "epoch seconds (7.3.7)")
		require.Equal(t, sdSeconds(sdStart.Add(100*time.Second)), all["LastModifiedTimestamp"], "epoch seconds of the last SetQueueAttributes")
	})

	t.Run("approximate counts, standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-counts", nil)
		e.send(url, "m1")
		e.send(url, "m2")
		e.send(url, "m3", sdDelay(10))
		require.Equal(t, "2/0/1", e.counts(url), "a delayed message counts as delayed only (10.1)")
		e.receiveOne(url)
		require.Equal(t, "1/1/1", e.counts(url))
		e.clk.Advance(10 * time.Second)
		require.Equal(t, "2/1/0", e.counts(url), "the delay ended")
		e.clk.Advance(sdDefaultVT - 10*time.Second)
		require.Equal(t, "3/0/0", e.counts(url), "the visibility timeout ended (10.3)")
		ms := e.receiveN(url, 10)
		require.Len(t, ms, 3)
		for _, m := range ms[:2] {
			require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle))
		}
		require.Equal(t, "0/1/0", e.counts(url), "deleted messages are not counted")
	})

	t.Run("approximate counts, FIFO", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-counts.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, g := range []string{"g1", "g2", "g3"} {
			e.send(url, g+"-a", sdGroup(g))
			e.send(url, g+"-b", sdGroup(g))
		}
		first, second := e.receiveOne(url), e.receiveOne(url)
		require.NotEqual(t, *first.Body, *second.Body)
		require.Equal(t, "4/2/0", e.counts(url), "messages behind an in-flight head count as visible (10.2)")
		e.clk.Advance(sdDefaultVT)
		require.Equal(t, "6/0/0", e.counts(url))

		d := e.create("sd-delayed.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true", "DelaySeconds", "5"))
		e.send(d, "later", sdGroup("g"))
		require.Equal(t, "0/0/1", e.counts(d))
		e.clk.Advance(5 * time.Second)
		require.Equal(t, "1/0/0", e.counts(d))
	})

	t.Run("InvalidAttributeName", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-ga-bad", nil)
		for _, names := range [][]types.QueueAttributeName{
			{"NoSuchAttribute"},
			{types.QueueAttributeNameVisibilityTimeout, "NoSuchAttribute"},
		} {
			_, err := e.c.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: names})
			t.Logf("AttributeNames %v", names)
			sdWantErr(t, err, sdBadAttrName, "")
			require.Contains(t, err.Error(), string(names[len(names)-1]), "the message names the attribute")
		}
	})
}

func TestSdSetQueueAttributes(t *testing.T) {
	t.Parallel()

	t.Run("each settable attribute", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-set", nil)
		policy := `{"Version":"2012-10-17","Id":"sd-policy","Statement":[{"Sid":"s1","Effect":"Allow",` +
			`"Principal":"*","Action":"sqs:SendMessage","Resource":"` + sdArn("sd-set") + `"}]}`
		for _, kv := range [][2]string{
			{"VisibilityTimeout", "0"}, {"VisibilityTimeout", "43200"}, {"VisibilityTimeout", "45"},
			{"DelaySeconds", "900"}, {"DelaySeconds", "0"},
			{"MessageRetentionPeriod", "60"}, {"MessageRetentionPeriod", "1209600"},
			{"MaximumMessageSize", "1024"}, {"MaximumMessageSize", "1048576"},
			{"ReceiveMessageWaitTimeSeconds", "20"}, {"ReceiveMessageWaitTimeSeconds", "0"},
		} {
			require.NoError(t, e.setAttrs(url, sdKV(kv[0], kv[1])), "SetQueueAttributes %s=%s", kv[0], kv[1])
			require.Equal(t, kv[1], e.attr(url, types.QueueAttributeName(kv[0])), "read back %s", kv[0])
		}
		// Encryption settings are stored and returned (the server does not encrypt).
		for _, kv := range [][2]string{
			{"KmsMasterKeyId", "alias/aws/sqs"}, {"KmsDataKeyReusePeriodSeconds", "300"}, {"SqsManagedSseEnabled", "true"},
		} {
			require.NoError(t, e.setAttrs(url, sdKV(kv[0], kv[1])), "SetQueueAttributes %s=%s", kv[0], kv[1])
			require.Equal(t, kv[1], e.attr(url, types.QueueAttributeName(kv[0])), "read back %s", kv[0])
		}
		require.NoError(t, e.setAttrs(url, sdKV("Policy", policy)))
		require.JSONEq(t, policy, e.attr(url, types.QueueAttributeNamePolicy), "the Policy is stored and returned")
		require.JSONEq(t, policy, e.attrs(url, types.QueueAttributeNameAll)["Policy"])

		// Several at once.
		require.NoError(t, e.setAttrs(url, sdKV("VisibilityTimeout", "12", "DelaySeconds", "3")))
		got := e.attrs(url, types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameDelaySeconds)
		require.Equal(t, sdKV("VisibilityTimeout", "12", "DelaySeconds", "3"), got)

		// The values take effect: the new visibility timeout applies to the next receive.
		require.NoError(t, e.setAttrs(url, sdKV("DelaySeconds", "0")))
		e.send(url, "m")
		e.receiveOne(url)
		e.clk.Advance(12 * time.Second)
		require.Equal(t, "m", *e.receiveOne(url).Body, "visible again after the new 12 s timeout")

		f := e.create("sd-set.fifo", sdKV("FifoQueue", "true"))
		for _, kv := range [][2]string{
			{"ContentBasedDeduplication", "true"}, {"ContentBasedDeduplication", "false"},
			{"DeduplicationScope", "messageGroup"}, {"FifoThroughputLimit", "perMessageGroupId"},
			{"FifoThroughputLimit", "perQueue"}, {"DeduplicationScope", "queue"},
		} {
			require.NoError(t, e.setAttrs(f, sdKV(kv[0], kv[1])), "SetQueueAttributes %s=%s", kv[0], kv[1])
			require.Equal(t, kv[1], e.attr(f, types.QueueAttributeName(kv[0])), "read back %s", kv[0])
		}
		// 3.12: a toggled ContentBasedDeduplication takes effect.
		_, err := e.trySend(f, "no dedup id", sdGroup("g"))
		sdWantErr(t, err, sdBadParam, sdNoDedupText)
		require.NoError(t, e.setAttrs(f, sdKV("ContentBasedDeduplication", "true")))
		e.send(f, "no dedup id", sdGroup("g"))
	})

	t.Run("retention and delay take effect", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-retention", sdKV("MessageRetentionPeriod", "60"))
		e.send(url, "in flight")
		e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 120})
		e.send(url, "never received")
		e.clk.Advance(60 * time.Second)
		require.Equal(t, "0/0/0", e.counts(url), "messages older than the retention period are gone, in flight or not (5.2)")

		cut := e.create("sd-retention-cut", nil)
		e.send(cut, "old")
		e.clk.Advance(90 * time.Second)
		e.send(cut, "new")
		require.NoError(t, e.setAttrs(cut, sdKV("MessageRetentionPeriod", "60")))
		require.Equal(t, []string{"new"}, sdBodies(e.receiveN(cut, 10)), "a shorter retention expires older messages (5.3)")

		std := e.create("sd-redelay", sdKV("DelaySeconds", "100"))
		e.send(std, "std")
		require.NoError(t, e.setAttrs(std, sdKV("DelaySeconds", "10")))
		e.clk.Advance(10 * time.Second)
		require.Empty(t, e.receiveN(std, 10), "a standard queue's delayed message keeps its delay (4.6)")
		e.clk.Advance(90 * time.Second)
		require.Equal(t, []string{"std"}, sdBodies(e.receiveN(std, 10)))
		f := e.create("sd-redelay.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true", "DelaySeconds", "100"))
		e.send(f, "fifo", sdGroup("g"))
		require.NoError(t, e.setAttrs(f, sdKV("DelaySeconds", "10")))
		e.clk.Advance(10 * time.Second)
		require.Equal(t, []string{"fifo"}, sdBodies(e.receiveN(f, 10)), "a FIFO queue applies the new delay (4.6)")
	})

	t.Run("invalid values", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-set-bad", sdKV("VisibilityTimeout", "40"))
		for _, kv := range [][2]string{
			{"VisibilityTimeout", "43201"}, {"VisibilityTimeout", "-1"}, {"VisibilityTimeout", "abc"}, {"VisibilityTimeout", "1.5"},
			{"DelaySeconds", "901"}, {"DelaySeconds", "-1"},
			{"MessageRetentionPeriod", "59"}, {"MessageRetentionPeriod", "1209601"},
			{"MaximumMessageSize", "1023"}, {"MaximumMessageSize", "1048577"},
			{"ReceiveMessageWaitTimeSeconds", "21"}, {"ReceiveMessageWaitTimeSeconds", "-1"},
		} {
			err := e.setAttrs(url, sdKV(kv[0], kv[1]))
			t.Logf("%s=%s", kv[0], kv[1])
			sdWantErr(t, err, sdBadAttrValue, "")
			require.Contains(t, err.Error(), kv[0], "the message names the attribute")
		}
		// A bad value among good ones changes nothing.
		err := e.setAttrs(url, sdKV("VisibilityTimeout", "41", "DelaySeconds", "901"))
		sdWantErr(t, err, sdBadAttrValue, "")
		require.Equal(t, "40", e.attr(url, types.QueueAttributeNameVisibilityTimeout), "unchanged after a rejected call")

		err = e.setAttrs(url, sdKV("NoSuchAttribute", "1"))
		sdWantErr(t, err, sdBadAttrName, "")
		// FIFO-only attributes on a standard queue (2.1, 3.12).
		err = e.setAttrs(url, sdKV("FifoQueue", "true"))
		sdWantErr(t, err, sdBadAttrName, "Unknown Attribute FifoQueue.")
		err = e.setAttrs(url, sdKV("FifoQueue", "false"))
		sdWantErr(t, err, sdBadAttrName, "Unknown Attribute FifoQueue.")
		err = e.setAttrs(url, sdKV("ContentBasedDeduplication", "true"))
		sdWantErr(t, err, sdBadAttrName, "")
		require.Equal(t, "40", e.attr(url, types.QueueAttributeNameVisibilityTimeout))

		f := e.create("sd-set-bad.fifo", sdKV("FifoQueue", "true"))
		require.NoError(t, e.setAttrs(f, sdKV("FifoQueue", "true")), "FifoQueue=true on a FIFO queue is a no-op (2.1)")
		err = e.setAttrs(f, sdKV("FifoQueue", "false"))
		sdWantErr(t, err, sdBadAttrValue, "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.")
		require.Equal(t, "true", e.attr(f, types.QueueAttributeNameFifoQueue))
		// perMessageGroupId only with messageGroup (3.13).
		err = e.setAttrs(f, sdKV("FifoThroughputLimit", "perMessageGroupId", "DeduplicationScope", "queue"))
		sdWantErr(t, err, sdBadAttrValue, "")
		err = e.setAttrs(f, sdKV("FifoThroughputLimit", "perMessageGroupId"))
		sdWantErr(t, err, sdBadAttrValue, "")
		err = e.setAttrs(f, sdKV("ContentBasedDeduplication", "maybe"))
		sdWantErr(t, err, sdBadAttrValue, "")
	})

	t.Run("RedrivePolicy", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		e.create("sd-dlq", nil)
		src := e.create("sd-src", nil)
		e.create("sd-dlq.fifo", sdKV("FifoQueue", "true"))
		policy := func(arn string, count any) string {
			b, err := json.Marshal(map[string]any{"deadLetterTargetArn": arn, "maxReceiveCount": count})
			require.NoError(t, err)
			return string(b)
		}
		readBack := func(url string) map[string]any {
			t.Helper()
			v, ok := e.attrs(url, types.QueueAttributeNameAll)["RedrivePolicy"]
			if !ok {
				return nil
			}
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&m), "RedrivePolicy %q is JSON", v)
			return m
		}

		require.NoError(t, e.setAttrs(src, sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), 3))))
		rp := readBack(src)
		require.Equal(t, sdArn("sd-dlq"), rp["deadLetterTargetArn"])
		require.Equal(t, "3", fmt.Sprint(rp["maxReceiveCount"]))
		require.Equal(t, rp, func() map[string]any {
			v := e.attr(src, types.QueueAttributeNameRedrivePolicy)
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&m))
			return m
		}(), "asked by name")

		// "42" as a string is accepted (6.1).
		require.NoError(t, e.setAttrs(src, sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), "42"))))
		require.Equal(t, "42", fmt.Sprint(readBack(src)["maxReceiveCount"]))

		// "" removes it (6.1).
		require.NoError(t, e.setAttrs(src, sdKV("RedrivePolicy", "")))
		require.Nil(t, readBack(src), "RedrivePolicy after setting it to \"\"")

		for _, bad := range []string{
			"{",
			"not json",
			`{"deadLetterTargetArn":"` + sdArn("sd-dlq") + `"}`,
			`{"maxReceiveCount":3}`,
			policy(sdArn("sd-dlq"), "abc"),
			policy(sdArn("sd-dlq"), 0),
			policy(sdArn("sd-dlq"), 1001),
			policy(sdArn("sd-no-such-queue"), 3),
			policy("not-an-arn", 3),
			policy(sdArn("sd-dlq.fifo"), 3), // a standard queue needs a standard DLQ (6.2)
		} {
			err := e.setAttrs(src, sdKV("RedrivePolicy", bad))
			t.Logf("RedrivePolicy %s", bad)
			sdWantErr(t, err, sdBadParam, "")
		}
		require.Nil(t, readBack(src), "rejected policies are not stored")
		// AWS's words (recorded): a target that is not an ARN is refused before any lookup, an ARN of no queue
		// after it.
		for bad, reason := range map[string]string{
			policy("dummy", 42):                  "Invalid value for deadLetterTargetArn.",
			policy(sdArn("sd-no-such-queue"), 3): "Dead-letter target does not exist.",
		} {
			err := e.setAttrs(src, sdKV("RedrivePolicy", bad))
			sdWantErr(t, err, sdBadParam, "Value "+bad+" for parameter RedrivePolicy is invalid. Reason: "+reason)
		}

		fsrc := e.create("sd-src.fifo", sdKV("FifoQueue", "true"))
		err := e.setAttrs(fsrc, sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), 3)))
		sdWantErr(t, err, sdBadParam, "")
		require.NoError(t, e.setAttrs(fsrc, sdKV("RedrivePolicy", policy(sdArn("sd-dlq.fifo"), 3))))

		// Given at creation too.
		c := e.create("sd-src2", sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), 2)))
		require.Equal(t, "2", fmt.Sprint(readBack(c)["maxReceiveCount"]))
	})

	t.Run("RedriveAllowPolicy", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-rap-dlq", nil)
		src := e.create("sd-rap-src", nil)
		other := e.create("sd-rap-other", nil)
		redrive := sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-rap-dlq")+`","maxReceiveCount":5}`)

		deny := `{"redrivePermission":"denyAll"}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", deny)))
		require.JSONEq(t, deny, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy))
		sdWantErr(t, e.setAttrs(src, redrive), sdBadParam, "")

		byOther := `{"redrivePermission":"byQueue","sourceQueueArns":["` + sdArn("sd-rap-other") + `"]}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", byOther)))
		require.JSONEq(t, byOther, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy))
		sdWantErr(t, e.setAttrs(src, redrive), sdBadParam, "")
		require.NoError(t, e.setAttrs(other, redrive))

		bySrc := `{"redrivePermission":"byQueue","sourceQueueArns":["` + sdArn("sd-rap-src") + `","` + sdArn("sd-rap-other") + `"]}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", bySrc)))
		require.NoError(t, e.setAttrs(src, redrive), "a listed source (6.7)")

		var eleven []string
		for i := range 11 {
			eleven = append(eleven, `"`+sdArn(fmt.Sprintf("sd-rap-%d", i))+`"`)
		}
		for _, bad := range []string{
			`{"redrivePermission":"byQueue","sourceQueueArns":[` + strings.Join(eleven, ",") + `]}`,
			`{"redrivePermission":"allowAll","sourceQueueArns":["` + sdArn("sd-rap-src") + `"]}`,
			`{"redrivePermission":"denyAll","sourceQueueArns":["` + sdArn("sd-rap-src") + `"]}`,
			`{"redrivePermission":"sometimes"}`,
			`{`,
		} {
			err := e.setAttrs(dlq, sdKV("RedriveAllowPolicy", bad))
			t.Logf("RedriveAllowPolicy %s", bad)
			sdWantErr(t, err, sdBadAttrValue, "")
		}
		require.JSONEq(t, bySrc, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy), "unchanged after rejected calls")

		allow := `{"redrivePermission":"allowAll"}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", allow)))
		require.JSONEq(t, allow, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy))
	})
}
