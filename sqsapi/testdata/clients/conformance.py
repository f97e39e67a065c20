"""Conformance of fifoq's SQS server with a real boto3, in whichever protocol its botocore speaks.

Usage: python3 conformance.py ENDPOINT_URL

botocore 1.31.x and earlier speak SQS's query protocol (form requests, XML answers); later ones its JSON
protocol (awsJson1_0 with x-amzn-query-error). The script prints the protocol first, then one line per
step, and exits 1 with a FAIL line at the first answer that is not what SQS sends. It needs nothing but
boto3 and a server with no queues of its names.
"""

import base64
import hashlib
import json
import sys

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def equal(got, want, what):
    if got != want:
        fail("%s: got %r, want %r" % (what, got, want))


def md5(b):
    return hashlib.md5(b).hexdigest()


def expect_error(call, code, status, message, shape=None, exc=None, **kwargs):
    """Runs call(**kwargs), which must fail with the query code `code`, the HTTP status and the message.
    In the JSON protocol botocore also reports the __type shape as QueryErrorCode. exc, when given, is the
    modeled exception class that must catch it."""
    try:
        call(**kwargs)
    except ClientError as e:
        err = e.response["Error"]
        what = "%s %r" % (call.__name__, kwargs)
        equal(err.get("Code"), code, what + ": Error.Code")
        equal(e.response["ResponseMetadata"]["HTTPStatusCode"], status, what + ": HTTP status")
        equal(err.get("Type"), "Sender", what + ": Error.Type")
        if message is not None:
            equal(err.get("Message"), message, what + ": Error.Message")
        if PROTOCOL == "json" and shape is not None:
            equal(err.get("QueryErrorCode"), shape, what + ": QueryErrorCode (the __type shape)")
        if exc is not None:
            check(isinstance(e, exc), "%s: %s is not caught by %s" % (what, type(e).__name__, exc.__name__))
        return e
    fail("%s %r succeeded; want %s" % (call.__name__, kwargs, code))


def main():
    global PROTOCOL
    endpoint = sys.argv[1]
    sqs = boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDCONFORMANCE",
        aws_secret_access_key="conformance-secret",
        config=Config(retries={"max_attempts": 0}),
    )
    PROTOCOL = sqs.meta.service_model.protocol
    print("protocol=%s boto3=%s botocore=%s python=%s" % (PROTOCOL, boto3.__version__, botocore.__version__, sys.executable), flush=True)
    ex = sqs.exceptions

    # Queues.
    std = sqs.create_queue(QueueName="cf-std")["QueueUrl"]
    check(std.endswith("/cf-std"), "CreateQueue QueueUrl %r" % std)
    fifo = sqs.create_queue(QueueName="cf.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true", "VisibilityTimeout": "43200"})["QueueUrl"]
    equal(sqs.create_queue(QueueName="cf-std")["QueueUrl"], std, "CreateQueue again with the same attributes")
    equal(sqs.get_queue_url(QueueName="cf.fifo")["QueueUrl"], fifo, "GetQueueUrl")
    equal(sorted(sqs.list_queues(QueueNamePrefix="cf")["QueueUrls"]), sorted([std, fifo]), "ListQueues")
    print("ok queues", flush=True)

    # Send, receive, delete, with message attributes of each type.
    attrs = {
        "S": {"DataType": "String", "StringValue": "foobar"},
        "N": {"DataType": "Number", "StringValue": "42"},
        "B": {"DataType": "Binary", "BinaryValue": b"\x00\x01bin"},
    }
    sent = sqs.send_message(QueueUrl=std, MessageBody="hello", MessageAttributes=attrs)
    equal(sent["MD5OfMessageBody"], md5(b"hello"), "SendMessage MD5OfMessageBody")
    check(sent.get("MessageId"), "SendMessage MessageId")
    check(sent.get("MD5OfMessageAttributes"), "SendMessage MD5OfMessageAttributes")
    got = sqs.receive_message(QueueUrl=std, MessageAttributeNames=["All"], AttributeNames=["All"], MaxNumberOfMessages=10)
    msgs = got.get("Messages", [])
    equal(len(msgs), 1, "ReceiveMessage count")
    m = msgs[0]
    equal(m["Body"], "hello", "Body")
    equal(m["MessageId"], sent["MessageId"], "MessageId")
    equal(m["MD5OfBody"], md5(b"hello"), "MD5OfBody")
    equal(m["MD5OfMessageAttributes"], sent["MD5OfMessageAttributes"], "MD5OfMessageAttributes")
    equal(m["MessageAttributes"]["B"]["BinaryValue"], b"\x00\x01bin", "binary attribute")
    equal(m["MessageAttributes"]["N"], {"DataType": "Number", "StringValue": "42"}, "number attribute")
    equal(m["Attributes"]["ApproximateReceiveCount"], "1", "ApproximateReceiveCount")
    check(m["Attributes"].get("SentTimestamp", "").isdigit(), "SentTimestamp %r" % m["Attributes"].get("SentTimestamp"))
    sqs.change_message_visibility(QueueUrl=std, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=60)
    sqs.delete_message(QueueUrl=std, ReceiptHandle=m["ReceiptHandle"])
    print("ok send/receive/delete", flush=True)

    # Batches: nothing failed leaves Failed out; a bad handle fails only its entry.
    batch = sqs.send_message_batch(QueueUrl=std, Entries=[{"Id": "e%d" % i, "MessageBody": "b%d" % i} for i in range(3)])
    equal(sorted(s["Id"] for s in batch["Successful"]), ["e0", "e1", "e2"], "SendMessageBatch Successful")
    check("Failed" not in batch, "SendMessageBatch with no failure has Failed: %r" % batch.get("Failed"))
    for s in batch["Successful"]:
        equal(s["MD5OfMessageBody"], md5(("b" + s["Id"][1:]).encode()), "batch entry MD5OfMessageBody")
    got = sqs.receive_message(QueueUrl=std, MaxNumberOfMessages=10)
    handles = [m["ReceiptHandle"] for m in got["Messages"]]
    equal(len(handles), 3, "ReceiveMessage after the batch")
    vis = sqs.change_message_visibility_batch(QueueUrl=std, Entries=[{"Id": "v0", "ReceiptHandle": handles[0], "VisibilityTimeout": 0}])
    equal([s["Id"] for s in vis["Successful"]], ["v0"], "ChangeMessageVisibilityBatch Successful")
    check("Failed" not in vis, "ChangeMessageVisibilityBatch Failed %r" % vis.get("Failed"))
    deleted = sqs.delete_message_batch(QueueUrl=std, Entries=[
        {"Id": "d1", "ReceiptHandle": handles[1]}, {"Id": "bad", "ReceiptHandle": "garbage"}])
    equal([s["Id"] for s in deleted["Successful"]], ["d1"], "DeleteMessageBatch Successful")
    equal(len(deleted["Failed"]), 1, "DeleteMessageBatch Failed")
    f = deleted["Failed"][0]
    equal((f["Id"], f["Code"], f["SenderFault"]), ("bad", "ReceiptHandleIsInvalid", True), "DeleteMessageBatch failed entry")
    only_failed = sqs.delete_message_batch(QueueUrl=std, Entries=[{"Id": "bad", "ReceiptHandle": "garbage"}])
    check("Successful" not in only_failed, "DeleteMessageBatch with no success has Successful: %r" % only_failed.get("Successful"))
    print("ok batches", flush=True)

    # Attributes.
    a = sqs.get_queue_attributes(QueueUrl=std, AttributeNames=["All"])["Attributes"]
    equal(a["VisibilityTimeout"], "30", "VisibilityTimeout")
    check(a["QueueArn"].endswith(":cf-std"), "QueueArn %r" % a["QueueArn"])
    sqs.set_queue_attributes(QueueUrl=std, Attributes={"VisibilityTimeout": "45", "DelaySeconds": "0"})
    equal(sqs.get_queue_attributes(QueueUrl=std, AttributeNames=["VisibilityTimeout", "DelaySeconds"])["Attributes"],
          {"VisibilityTimeout": "45", "DelaySeconds": "0"}, "attributes after SetQueueAttributes")
    fa = sqs.get_queue_attributes(QueueUrl=fifo, AttributeNames=["FifoQueue", "ContentBasedDeduplication"])["Attributes"]
    equal(fa, {"FifoQueue": "true", "ContentBasedDeduplication": "true"}, "FIFO attributes")
    sqs.tag_queue(QueueUrl=std, Tags={"team": "core"})
    equal(sqs.list_queue_tags(QueueUrl=std)["Tags"], {"team": "core"}, "ListQueueTags")
    print("ok attributes", flush=True)

    # Errors: the query code in Error.Code, the modeled exception class, the status and SQS's message.
    missing = std[: -len("cf-std")] + "cf-none"
    nonexistent = "The specified queue does not exist." if PROTOCOL == "json" else "The specified queue does not exist for this wsdl version."
    expect_error(sqs.get_queue_url, "AWS.SimpleQueueService.NonExistentQueue", 400, nonexistent,
                 shape="QueueDoesNotExist", exc=ex.QueueDoesNotExist, QueueName="cf-none")
    expect_error(sqs.send_message, "AWS.SimpleQueueService.NonExistentQueue", 400, nonexistent,
                 shape="QueueDoesNotExist", exc=ex.QueueDoesNotExist, QueueUrl=missing, MessageBody="x")
    expect_error(sqs.receive_message, "InvalidParameterValue", 400,
                 "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
                 shape="InvalidParameterValueException", QueueUrl=std, MaxNumberOfMessages=11)
    expect_error(sqs.send_message, "MissingParameter", 400, "The request must contain the parameter MessageGroupId.",
                 shape="MissingRequiredParameterException", QueueUrl=fifo, MessageBody="x")
    expect_error(sqs.create_queue, "QueueAlreadyExists", 400,
                 "A queue already exists with the same name and a different value for attribute DelaySeconds",
                 shape="QueueNameExists", exc=ex.QueueNameExists, QueueName="cf-std", Attributes={"DelaySeconds": "5"})
    expect_error(sqs.delete_message, "ReceiptHandleIsInvalid", 404,
                 'The input receipt handle "garbage" is not a valid receipt handle.',
                 shape="ReceiptHandleIsInvalid", exc=ex.ReceiptHandleIsInvalid, QueueUrl=std, ReceiptHandle="garbage")
    expect_error(sqs.get_queue_attributes, "InvalidAttributeName", 400, "Unknown Attribute Foobar.",
                 shape="InvalidAttributeName", exc=ex.InvalidAttributeName, QueueUrl=std, AttributeNames=["Foobar"])
    expect_error(sqs.send_message_batch, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400, "Id x repeated.",
                 shape="BatchEntryIdsNotDistinct", exc=ex.BatchEntryIdsNotDistinct, QueueUrl=std,
                 Entries=[{"Id": "x", "MessageBody": "a"}, {"Id": "x", "MessageBody": "b"}])
    sqs.purge_queue(QueueUrl=std)
    expect_error(sqs.purge_queue, "AWS.SimpleQueueService.PurgeQueueInProgress", 403,
                 "Only one PurgeQueue operation on cf-std is allowed every 60 seconds.",
                 shape="PurgeQueueInProgress", exc=ex.PurgeQueueInProgress, QueueUrl=std)
    print("ok errors", flush=True)

    # Group order on a FIFO queue: a group's messages come in the order sent, and none of a group comes
    # while one of it is in flight.
    seqs = []
    for group, body in [("g1", "g1-a"), ("g2", "g2-a"), ("g1", "g1-b"), ("g2", "g2-b"), ("g1", "g1-c")]:
        r = sqs.send_message(QueueUrl=fifo, MessageBody=body, MessageGroupId=group)
        seqs.append(int(r["SequenceNumber"]))
    equal(seqs, sorted(seqs), "SequenceNumbers increase")
    check(len(set(seqs)) == len(seqs), "SequenceNumbers are distinct: %r" % seqs)
    first = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=1, AttributeNames=["MessageGroupId", "SequenceNumber"])["Messages"]
    equal([m["Body"] for m in first], ["g1-a"], "first receive")
    equal(first[0]["Attributes"]["MessageGroupId"], "g1", "MessageGroupId attribute")
    equal(int(first[0]["Attributes"]["SequenceNumber"]), seqs[0], "SequenceNumber attribute")
    second = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10)["Messages"]
    equal([m["Body"] for m in second], ["g2-a", "g2-b"], "receive while g1 is in flight")
    check("Messages" not in sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10), "receive while both groups are in flight")
    sqs.delete_message(QueueUrl=fifo, ReceiptHandle=first[0]["ReceiptHandle"])
    third = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10)["Messages"]
    equal([m["Body"] for m in third], ["g1-b", "g1-c"], "receive after g1-a is deleted")
    print("ok group order", flush=True)

    # Empty results: no Messages, no QueueUrls, no Attributes, no Tags.
    empty = sqs.create_queue(QueueName="cf-empty")["QueueUrl"]
    r = sqs.receive_message(QueueUrl=empty)
    check("Messages" not in r, "empty ReceiveMessage has Messages: %r" % r.get("Messages"))
    r = sqs.list_queues(QueueNamePrefix="nothing")
    check("QueueUrls" not in r, "empty ListQueues has QueueUrls: %r" % r.get("QueueUrls"))
    r = sqs.get_queue_attributes(QueueUrl=empty, AttributeNames=["Policy"])
    check(not r.get("Attributes"), "GetQueueAttributes of an unset Policy: %r" % r.get("Attributes"))
    r = sqs.list_queue_tags(QueueUrl=empty)
    check(not r.get("Tags"), "ListQueueTags of an untagged queue: %r" % r.get("Tags"))
    print("ok empty results", flush=True)

    # Answers AWS gave on record (sqsapi/recorded_test.go names where): a queue may be its own dead-letter
    # queue; CancelMessageMoveTask of a handle whose source does not exist; AddPermission of a principal that
    # is no account id; a deduplication id on a standard queue; UntagQueue without keys; a URL per region.
    own = sqs.get_queue_attributes(QueueUrl=empty, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sqs.set_queue_attributes(QueueUrl=empty, Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": own, "maxReceiveCount": "42"})})
    rp = json.loads(sqs.get_queue_attributes(QueueUrl=empty, AttributeNames=["RedrivePolicy"])["Attributes"]["RedrivePolicy"])
    equal(rp, {"deadLetterTargetArn": own, "maxReceiveCount": 42}, "RedrivePolicy naming the queue itself")
    sqs.set_queue_attributes(QueueUrl=empty, Attributes={"RedrivePolicy": ""})
    check("RedrivePolicy" not in sqs.get_queue_attributes(QueueUrl=empty, AttributeNames=["All"])["Attributes"], "RedrivePolicy removed")
    handle = base64.b64encode(json.dumps({"taskId": "10f57157-fc38-4da9-a113-4de7e12d05dd",
                                          "sourceArn": "arn:aws:sqs:us-east-1:878966065785:test-queue-doesnt-exist-123456"}).encode()).decode()
    if hasattr(sqs, "cancel_message_move_task"):  # botocore 1.31 and later: Debian's 1.29 has no move tasks
        expect_error(sqs.cancel_message_move_task, "ResourceNotFoundException", 404,
                     "The resource that you specified for the SourceArn parameter doesn't exist.",
                     shape="ResourceNotFoundException", exc=ex.ResourceNotFoundException, TaskHandle=handle)
    expect_error(sqs.add_permission, "InvalidParameterValue", 400,
                 "Value [*] for parameter PrincipalId is invalid. Reason: Unable to verify.",
                 shape="InvalidParameterValueException", QueueUrl=empty, Label="l", AWSAccountIds=["*"], Actions=["SendMessage"])
    check("Policy" not in sqs.get_queue_attributes(QueueUrl=empty, AttributeNames=["All"])["Attributes"], "a refused AddPermission changes nothing")
    expect_error(sqs.send_message, "InvalidParameterValue", 400,
                 "Value d-1 for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.",
                 shape="InvalidParameterValueException", QueueUrl=empty, MessageBody="x", MessageDeduplicationId="d-1")
    expect_error(sqs.untag_queue, "InvalidParameterValue", 400, "Tag keys must be between 1 and 128 characters in length.",
                 shape="InvalidParameterValueException", QueueUrl=empty, TagKeys=[])
    eu = boto3.client("sqs", endpoint_url=endpoint, region_name="eu-west-1", aws_access_key_id="AKIDCONFORMANCE",
                      aws_secret_access_key="conformance-secret", config=Config(retries={"max_attempts": 0}))
    home = sqs.create_queue(QueueName="cf-x")["QueueUrl"]
    away = eu.create_queue(QueueName="cf-x")["QueueUrl"]
    equal(home, endpoint + "/000000000000/cf-x", "QueueUrl in the default region")
    equal(away, endpoint + "/queue/eu-west-1/000000000000/cf-x", "QueueUrl in another region, on the same endpoint")
    eu.send_message(QueueUrl=away, MessageBody="away")
    equal([m["Body"] for m in eu.receive_message(QueueUrl=away)["Messages"]], ["away"], "receive by the regional URL")
    check("Messages" not in sqs.receive_message(QueueUrl=home), "the default region's cf-x is another queue")
    eu.delete_queue(QueueUrl=away)
    sqs.delete_queue(QueueUrl=home)
    print("ok recorded answers", flush=True)

    for u in (std, fifo, empty):
        sqs.delete_queue(QueueUrl=u)
    check("QueueUrls" not in sqs.list_queues(QueueNamePrefix="cf"), "queues left after DeleteQueue")
    print("PASS protocol=%s" % PROTOCOL, flush=True)


PROTOCOL = None

if __name__ == "__main__":
    main()
