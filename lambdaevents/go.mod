module github.com/fifoq/fifoq/lambdaevents

go 1.25.0

require (
	github.com/aws/aws-lambda-go v1.54.0
	github.com/fifoq/fifoq v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/google/btree v1.1.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
