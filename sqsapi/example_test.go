package sqsapi_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"

	"github.com/fifoq/fifoq/sqsapi"
)

// A Server answers SQS's JSON protocol (and its query protocol) over HTTP. Any AWS SDK pointed at it works
// unchanged; here the requests are written by hand, to show the wire, and sent in process with HTTPClient.
func Example() {
	srv := sqsapi.NewServer()
	client := srv.HTTPClient() // calls srv.ServeHTTP, with no socket

	call := func(action, body string) string {
		req, err := http.NewRequest(http.MethodPost, "http://sqs.test/", strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		resp, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			log.Fatal(err)
		}
		return resp.Status + " " + string(out)
	}

	fmt.Println(call("CreateQueue", `{"QueueName":"orders"}`))
	call("SendMessage", `{"QueueUrl":"http://sqs.test/000000000000/orders","MessageBody":"hello"}`)
	q, _ := srv.Queue("orders") // the *fifoq.Queue behind the URL
	fmt.Printf("%+v\n", q.Stats())
	fmt.Println(call("GetQueueUrl", `{"QueueName":"missing"}`))
	// Output:
	// 200 OK {"QueueUrl":"http://sqs.test/000000000000/orders"}
	// {Visible:1 InFlight:0 Delayed:0}
	// 400 Bad Request {"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}
}
