package gkeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Scopes requested for every token. cloud-platform covers container/v1;
// userinfo.email makes the token carry the identity's email, which is what
// GKE's Kubernetes API maps to RBAC subjects (as gcloud's own tokens do).
var Scopes = []string{
	"https://www.googleapis.com/auth/cloud-platform",
	"https://www.googleapis.com/auth/userinfo.email",
}

// supportedCredentialTypes are the credential JSON "type" values we accept.
// The list is explicit (rather than letting the library accept anything)
// because the oauth2 library asks callers to validate the type of
// credentials they load.
var supportedCredentialTypes = []google.CredentialsType{
	google.ServiceAccount,
	google.AuthorizedUser,
	google.ImpersonatedServiceAccount,
	google.ExternalAccount,
	google.ExternalAccountAuthorizedUser,
}

type resolvedCredentials struct {
	ts      oauth2.TokenSource
	project string
	source  string
}

// resolveCredentials applies the precedence AccessToken > Credentials >
// Application Default Credentials. Errors never contain the secret values:
// not the token, not the JSON, and not a value that was taken as a path
// (it may well be a mangled secret pasted into the wrong attribute).
func resolveCredentials(ctx context.Context, cfg Config) (resolvedCredentials, error) {
	// Token sources outlive the call that creates them (they refresh on
	// later requests), so they must not inherit its cancellation; values such
	// as an injected oauth2.HTTPClient are kept.
	ctx = context.WithoutCancel(ctx)
	params := google.CredentialsParams{Scopes: Scopes}

	if tok := strings.TrimSpace(cfg.AccessToken); tok != "" {
		return resolvedCredentials{
			ts:     oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}),
			source: "access_token",
		}, nil
	}

	if raw := strings.TrimSpace(cfg.Credentials); raw != "" {
		data, source := []byte(raw), "credentials JSON"
		// A JSON document always starts with "{"; a path never reasonably
		// does, so this is unambiguous in practice.
		if !strings.HasPrefix(raw, "{") {
			var err error
			if data, err = readCredentialsFile(raw); err != nil {
				return resolvedCredentials{}, err
			}
			source = "credentials file"
		}
		creds, err := credentialsFromJSON(ctx, data, params, source)
		if err != nil {
			return resolvedCredentials{}, err
		}
		return resolvedCredentials{ts: creds.TokenSource, project: creds.ProjectID, source: source}, nil
	}

	creds, err := google.FindDefaultCredentialsWithParams(ctx, params)
	if err != nil {
		return resolvedCredentials{}, fmt.Errorf("no Google credentials: set the provider's credentials or access_token, "+
			"or configure Application Default Credentials (gcloud auth application-default login, or "+
			"GOOGLE_APPLICATION_CREDENTIALS): %w", err)
	}
	return resolvedCredentials{ts: creds.TokenSource, project: creds.ProjectID, source: "application default credentials"}, nil
}

// readCredentialsFile reads the credentials file at path. Errors describe
// the problem without the path itself (see resolveCredentials).
func readCredentialsFile(path string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, rest)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		// *fs.PathError embeds the path; keep only the cause.
		var pe *fs.PathError
		cause := err
		if errors.As(err, &pe) {
			cause = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("credentials: the value is not a JSON document (it does not start with '{'), " +
				"so it was taken as a file path, and no such file exists; set credentials to the contents of a " +
				"credentials JSON file or to the path of one (the value is not shown because it may be secret)")
		}
		return nil, fmt.Errorf("credentials: the value was taken as a file path, and reading that file failed: %v "+
			"(the path is not shown because it may be secret)", cause)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(data)), "{") {
		return nil, errors.New("credentials: the credentials file is not a JSON document")
	}
	return data, nil
}

// credentialsFromJSON checks the document's type against the supported
// list and builds credentials of that type.
func credentialsFromJSON(ctx context.Context, data []byte, params google.CredentialsParams, source string) (*google.Credentials, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		// json errors can quote a fragment of the input; report only where.
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("credentials: the %s is not valid JSON (syntax error at byte %d)", source, se.Offset)
		}
		return nil, fmt.Errorf("credentials: the %s is not a JSON object of the expected shape", source)
	}
	for _, t := range supportedCredentialTypes {
		if string(t) != head.Type {
			continue
		}
		creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, data, t, params)
		if err != nil {
			return nil, fmt.Errorf("credentials: loading the %s (type %q): %w", source, head.Type, err)
		}
		return creds, nil
	}
	names := make([]string, len(supportedCredentialTypes))
	for i, t := range supportedCredentialTypes {
		names[i] = string(t)
	}
	return nil, fmt.Errorf("credentials: the %s has type %q; supported types are %s",
		source, head.Type, strings.Join(names, ", "))
}
