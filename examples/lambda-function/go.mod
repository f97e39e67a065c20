module github.com/fifoq/fifoq/examples/lambda-function

go 1.25.0

require github.com/aws/aws-lambda-go v1.54.0
