package gkeapi

import "time"

// Config is the Google connection as the provider resolved it (provider
// attribute > environment variable already applied). Empty credentials and
// access token mean Application Default Credentials.
type Config struct {
	Project string
	// Credentials is a service-account (or other) credentials JSON document,
	// or a path to one. Sensitive.
	Credentials string
	// AccessToken is an OAuth2 access token used as is. Sensitive.
	AccessToken string
	// Endpoint overrides the container API base URL (private endpoints, the emulator in tests).
	Endpoint string
	// AllowCredentialsOverHTTP lets the Google access token go to an
	// http:// Endpoint, unencrypted. Every container API request carries
	// the token, so without it an http:// Endpoint is refused (see
	// PlainHTTPError): only for an emulator on a network the user trusts.
	AllowCredentialsOverHTTP bool
	// RequestTimeout bounds a single HTTP request; 0 means the library default.
	RequestTimeout time.Duration
	UserAgent      string
}
