package rule

import (
	"strconv"
	"strings"
)

// An ARN is an Amazon Resource Name: arn:<partition>:<service>:<region>:<account>:<resource>.
type ARN struct {
	Partition string // "aws", "aws-cn" or "aws-us-gov"
	Service   string // "sqs", "sns", ...
	Region    string
	Account   string
	Resource  string // a queue's or topic's name; a subscription's is "<topic>:<uuid>"
}

// Partition returns the ARN partition of region: "aws-cn" in China's regions, "aws-us-gov" in GovCloud's,
// "aws" in every other.
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// MakeARN returns the ARN of resource of service, in region and account, with the partition of region.
func MakeARN(service, region, account, resource string) string {
	return "arn:" + Partition(region) + ":" + service + ":" + region + ":" + account + ":" + resource
}

// String returns the ARN.
func (a ARN) String() string {
	return "arn:" + a.Partition + ":" + a.Service + ":" + a.Region + ":" + a.Account + ":" + a.Resource
}

// ParseARN splits s into its six elements, the resource being everything after the fifth colon. It checks
// the number of elements only: fewer than six return an *ElementsError, whose text is SNS's. The caller
// checks the prefix, service, region and account it expects.
func ParseARN(s string) (ARN, error) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) < 6 {
		return ARN{}, &ElementsError{N: len(parts)}
	}
	return ARN{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}, nil
}

// IsARN reports whether a parameter that names a resource by its name or its ARN gives an ARN.
func IsARN(s string) bool { return strings.HasPrefix(s, "arn:") }

// An ElementsError is ParseARN's error for a string of N elements, fewer than six.
type ElementsError struct{ N int }

func (e *ElementsError) Error() string {
	return "An ARN must have at least 6 elements, not " + strconv.Itoa(e.N)
}

// IAMARN returns the ARN of an IAM resource of account (IAM has no region: the ARN's is empty), in the
// partition of region: arn:<partition>:iam::<account>:<resource>, such as an account's root.
func IAMARN(region, account, resource string) string {
	return "arn:" + Partition(region) + ":iam::" + account + ":" + resource
}
