package fastpath

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Detached contexts for the framework's calls
//
// The framework's protocol server keeps the cancel function of every
// call's context until StopProvider (terraform-plugin-framework v1.19.0,
// internal/proto6server/serve.go:24-39: registerContext appends it to
// contextCancels, which only cancelRegisteredContexts empties), and each
// cancel function holds its context and, through it, the call's context
// with everything terraform-plugin-go hung on it (tf6server's loggers and
// their options, the request id): about 14 KB per call, kept for the life
// of the provider process. In a process that answers thousands of calls
// through the framework (the applies of a large configuration) that was
// most of the live heap, and the collector, which lets the heap grow to
// twice what is live, doubled it again.
//
// So every call the wrapper hands to the framework gets a context of its
// own (detach): it forwards values, deadline and cancellation of the
// call's context while the call runs and lets go of it when the call
// returns (it is then cancelled, as the call's context is once its gRPC
// stream ends). What the framework keeps is that small context, not the
// call's.

// detachedCtx is a context.Context that forwards to parent until release.
type detachedCtx struct {
	deadline    time.Time
	hasDeadline bool
	done        chan struct{}

	mu     sync.Mutex
	parent context.Context // nil once released
	err    error
	funcs  map[*func()]struct{} // AfterFunc registrations not run yet
}

// detach returns a context for one call to the framework and the function
// that ends it, to be called when the call returns.
func detach(parent context.Context) (context.Context, func()) {
	d := &detachedCtx{parent: parent, done: make(chan struct{}), funcs: map[*func()]struct{}{}}
	d.deadline, d.hasDeadline = parent.Deadline()
	if err := parent.Err(); err != nil {
		d.cancel(err)
	}
	stop := context.AfterFunc(parent, func() { d.cancel(parent.Err()) })
	return d, func() {
		stop()
		d.cancel(context.Canceled)
		d.mu.Lock()
		d.parent = nil
		d.mu.Unlock()
	}
}

func (d *detachedCtx) Deadline() (time.Time, bool) { return d.deadline, d.hasDeadline }

func (d *detachedCtx) Done() <-chan struct{} { return d.done }

func (d *detachedCtx) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

func (d *detachedCtx) Value(key any) any {
	d.mu.Lock()
	p := d.parent
	d.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Value(key)
}

// AfterFunc lets context.WithCancel and the like, given this context as
// their parent, register their cancellation here (the context package's
// afterFuncer) instead of starting a goroutine that waits for Done; a
// registration is dropped when it runs or is stopped, so nothing outlives
// the call through it.
func (d *detachedCtx) AfterFunc(f func()) (stop func() bool) {
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	key := &f
	d.funcs[key] = struct{}{}
	d.mu.Unlock()
	return func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		_, ok := d.funcs[key]
		delete(d.funcs, key)
		return ok
	}
}

// cancel ends the context with err (the first call wins) and runs the
// registered functions.
func (d *detachedCtx) cancel(err error) {
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return
	}
	d.err = err
	close(d.done)
	funcs := d.funcs
	d.funcs = nil
	d.mu.Unlock()
	for f := range funcs {
		go (*f)()
	}
}

// callFramework calls f, one of the framework server's methods, with a
// detached context (see above).
func callFramework[Req, Resp any](ctx context.Context, f func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	dctx, release := detach(ctx)
	defer release()
	return f(dctx, req)
}

// The calls the wrapper does not answer itself that Terraform sends once
// per resource or data source instance go to the framework detached as
// well (the rest come once per process).

func (s *Server) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return callFramework(ctx, s.FrameworkServer.ImportResourceState, req)
}

func (s *Server) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return callFramework(ctx, s.FrameworkServer.MoveResourceState, req)
}

func (s *Server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return callFramework(ctx, s.FrameworkServer.ValidateDataResourceConfig, req)
}

func (s *Server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return callFramework(ctx, s.FrameworkServer.ReadDataSource, req)
}

func (s *Server) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return callFramework(ctx, s.FrameworkServer.CallFunction, req)
}
