package validators

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// RFC3339 accepts an RFC 3339 timestamp such as 2030-01-02T15:04:05Z or
// 2030-01-02T17:04:05+02:00 (the date-time format of Kubernetes fields such
// as a sandbox's shutdownTime).
func RFC3339() validator.String {
	return Valid("Invalid timestamp", "must be an RFC 3339 timestamp such as 2030-01-02T15:04:05Z", func(s string) bool {
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	})
}
