package wasmhost

import (
	"context"
	"io"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// Module is one revision of a service as a core WebAssembly module: the
// binary, the functions it implements and what it is granted.
type Module struct {
	// Service, Revision and Contract place the functions in the reference
	// host's catalog, as refhost.Function does.
	Service  string
	Revision string
	Contract string
	// Binary is the core module, at most MaxModuleBytes. It is compiled
	// once, at Register; the Runtime keeps no reference to the slice.
	Binary []byte
	// Functions are the functions the module exports, 1..256, each
	// under its WIT name with its declared types.
	Functions []Export
	// MemoryPages is the memory ceiling of one activation, in 64 KiB
	// pages, 1..MaxMemoryPages. The reference host reserves it for every
	// activation before any network (refhost.Function.Memory); a growth
	// past it fails inside the guest (memory.grow returns -1).
	MemoryPages uint32
	// Grants is what the guest may import. Zero: nothing.
	Grants Grant
}

// Export is one function of a Module.
type Export struct {
	// Name is the export's name and the function's, a WIT identifier
	// (as a binding's Function names it).
	Name string
	// Params and Result are the declared WIT types; Result nil for none.
	// A Result of kind result makes its err a declared failure: the
	// failure codes are the case names of an enum or variant err type,
	// and "err" for any other err type.
	Params []refhost.Type
	Result *refhost.Type
}

// Grant is a set of capabilities a guest may import.
type Grant uint8

// Grants.
const (
	// GrantWASI links the functions of wasi_snapshot_preview1 that reach
	// nothing outside the instance (docs/GUESTS.md lists them): empty
	// arguments and environment, the host's clocks, random bytes from
	// crypto/rand, sleeps cut at the activation's deadline, proc_exit,
	// sched_yield, and stdout and stderr, discarded unless GrantOutput.
	// No filesystem, no socket. A Go guest (GOOS=wasip1) needs it.
	GrantWASI Grant = 1 << iota
	// GrantOutput keeps the first 4 KiB of the guest's stdout and
	// stderr for the activation's Report. Without it they are discarded.
	GrantOutput
	grantAll = GrantWASI | GrantOutput
)

// exportDecl is one validated function of a compiled module.
type exportDecl struct {
	name     string
	params   []refhost.Type
	result   *refhost.Type
	failures []string
}

// compiled is a validated, compiled module: what every activation of its
// functions instantiates.
type compiled struct {
	r        *Runtime
	mod      wazero.CompiledModule
	service  string
	revision string
	contract string
	pages    uint32
	grants   Grant
	init     bool // exports _initialize (a WASI reactor)
	// config is every instance's configuration before an activation's
	// own additions: anonymous, no start function, and for a module
	// without GrantWASI a random source that is never read (nothing can
	// import random_get), which spares wazero seeding its default one.
	config wazero.ModuleConfig
	// memory holds buffers of instances that ended, for the next ones
	// (ceiling).
	memory *bufferPool
}

// Register validates and compiles m once, then registers each of its
// functions with the reference host under m's service, revision and
// contract, with the memory ceiling as refhost.Function.Memory. Nothing is
// instantiated until an activation. A refusal is a *RegisterError naming
// the problem; when one function is refused by the host, those registered
// before it stay registered (the host has no removal), and the error
// names it.
func (r *Runtime) Register(ctx context.Context, m Module) error {
	decls, err := m.check()
	if err != nil {
		return err
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return ErrClosed
	}
	bin, tableElements, over, ok := boundTables(m.Binary)
	switch {
	case over:
		return &RegisterError{Problem: ProblemTable}
	case !ok:
		return &RegisterError{Problem: ProblemInvalid}
	}
	start := time.Now()
	cm, err := r.rt.CompileModule(ctx, bin)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &RegisterError{Problem: ProblemInvalid}
	}
	took := time.Since(start)
	c := &compiled{
		r: r, mod: cm, service: m.Service, revision: m.Revision, contract: m.Contract,
		pages: m.MemoryPages, grants: m.Grants,
		config: wazero.NewModuleConfig().WithName("").WithStartFunctions().WithRandSource(noRandom{}),
		memory: newBufferPool(),
	}
	if err := c.validate(bin, decls); err != nil {
		_ = cm.Close(ctx)
		return err
	}
	r.mu.Lock()
	r.stats.Modules++
	r.stats.Compile += took
	r.mu.Unlock()
	for _, d := range decls {
		err := r.host.Register(refhost.Function{
			Service: m.Service, Revision: m.Revision, Contract: m.Contract, Name: d.name,
			Params: d.params, Result: d.result, Failures: d.failures,
			Memory: int(m.MemoryPages)*PageSize + int(tableElements)*tableElementBytes,
			Func:   c.funcOf(d),
		})
		if err != nil {
			return &RegisterError{Problem: ProblemRegistration, Name: d.name, Err: err}
		}
	}
	return nil
}

// check validates m's declaration, before any compilation.
func (m *Module) check() ([]*exportDecl, error) {
	bad := func(name string, err error) error {
		return &RegisterError{Problem: ProblemModule, Name: name, Err: err}
	}
	if len(m.Binary) == 0 || len(m.Binary) > MaxModuleBytes {
		return nil, bad("", nil)
	}
	if m.MemoryPages < 1 || m.MemoryPages > MaxMemoryPages {
		return nil, bad("", nil)
	}
	if m.Grants&^grantAll != 0 || m.Grants&GrantOutput != 0 && m.Grants&GrantWASI == 0 {
		return nil, bad("", nil)
	}
	if len(m.Functions) == 0 || len(m.Functions) > maxExports {
		return nil, bad("", nil)
	}
	decls := make([]*exportDecl, 0, len(m.Functions))
	seen := make(map[string]bool, len(m.Functions))
	for _, f := range m.Functions {
		if f.Name == "" || f.Name == exportMemory || f.Name == exportRealloc || f.Name == exportInit || seen[f.Name] {
			return nil, bad(f.Name, nil)
		}
		seen[f.Name] = true
		sig, err := refhost.NewSignature(f.Params...)
		if err != nil {
			return nil, bad(f.Name, err)
		}
		d := &exportDecl{name: f.Name, params: sig.Params()}
		if f.Result != nil {
			if err := f.Result.Validate(); err != nil {
				return nil, bad(f.Name, err)
			}
			res := *f.Result
			d.result = &res
			d.failures = failureCodes(&res)
		}
		decls = append(decls, d)
	}
	return decls, nil
}

// failureCodes returns the declared failure codes of a result type: the
// err type's case names for an enum or variant, "err" otherwise; none
// when the type is not a result.
func failureCodes(t *refhost.Type) []string {
	if t.Kind != refhost.KindResult {
		return nil
	}
	if t.Err != nil && (t.Err.Kind == refhost.KindEnum || t.Err.Kind == refhost.KindVariant) {
		codes := make([]string, len(t.Err.Cases))
		for i, c := range t.Err.Cases {
			codes[i] = c.Name
		}
		return codes
	}
	return []string{codeErr}
}

// codeErr is the failure code of an err that is not an enum or variant.
const codeErr = "err"

// The exports and imports of the guest ABI.
const (
	exportMemory  = "memory"
	exportRealloc = "cabi_realloc"
	exportInit    = "_initialize"
	moduleWASI    = "wasi_snapshot_preview1"
)

// validate checks the compiled module (bin, compiled) against the grants,
// the ABI's own exports, the memory ceiling and the declared exports.
func (c *compiled) validate(bin []byte, decls []*exportDecl) error {
	cm := c.mod
	imps, ok := readImports(bin)
	if !ok {
		return &RegisterError{Problem: ProblemInvalid}
	}
	for _, imp := range imps {
		if imp.kind != importFunc || c.grants&GrantWASI == 0 || imp.module != moduleWASI || !wasiFunction(imp.name) {
			return &RegisterError{Problem: ProblemImport, Name: boundedName(imp.module + "." + imp.name)}
		}
	}
	for _, imp := range cm.ImportedFunctions() {
		module, name, _ := imp.Import()
		if !c.r.wasiTyped(name, imp) {
			return &RegisterError{Problem: ProblemImport, Name: boundedName(module + "." + name)}
		}
	}
	mem, ok := cm.ExportedMemories()[exportMemory]
	if !ok {
		return &RegisterError{Problem: ProblemMissingExport, Name: exportMemory}
	}
	if mem.Min() > c.pages {
		return &RegisterError{Problem: ProblemMemory, Name: exportMemory}
	}
	fns := cm.ExportedFunctions()
	i32 := api.ValueTypeI32
	if err := checkExport(fns, exportRealloc, []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}); err != nil {
		return err
	}
	if _, ok := fns[exportInit]; ok {
		if err := checkExport(fns, exportInit, nil, nil); err != nil {
			return err
		}
		c.init = true
	}
	for _, d := range decls {
		cp, cr := coreSignature(d.params, d.result)
		if err := checkExport(fns, d.name, cp, cr); err != nil {
			return err
		}
	}
	return nil
}

// checkExport checks that fns exports name with exactly the core types.
func checkExport(fns map[string]api.FunctionDefinition, name string, params, results []api.ValueType) error {
	f, ok := fns[name]
	if !ok {
		return &RegisterError{Problem: ProblemMissingExport, Name: name}
	}
	if !sameTypes(f.ParamTypes(), params) || !sameTypes(f.ResultTypes(), results) {
		return &RegisterError{Problem: ProblemExportSignature, Name: name}
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// wasiFunction reports whether GrantWASI links the function of
// wasi_snapshot_preview1 named name: none of them reaches a file, a
// directory, a socket or the host's environment. Descriptor calls see only
// stdin (empty), stdout and stderr.
func wasiFunction(name string) bool {
	switch name {
	case "args_get", "args_sizes_get", "environ_get", "environ_sizes_get",
		"clock_res_get", "clock_time_get",
		"fd_close", "fd_fdstat_get", "fd_fdstat_set_flags", "fd_prestat_get", "fd_prestat_dir_name",
		"fd_read", "fd_write", "fd_seek",
		"poll_oneoff", "proc_exit", "sched_yield", "random_get":
		return true
	}
	return false
}

// wasiTyped reports whether the imported function of wasi_snapshot_preview1
// has the type of wazero's implementation.
func (r *Runtime) wasiTyped(name string, imp api.FunctionDefinition) bool {
	host := r.rt.Module(moduleWASI)
	if host == nil {
		return false
	}
	def, ok := host.ExportedFunctionDefinitions()[name]
	return ok && sameTypes(def.ParamTypes(), imp.ParamTypes()) && sameTypes(def.ResultTypes(), imp.ResultTypes())
}

// noRandom is the random source of a module without GrantWASI, which has
// no way to read it.
type noRandom struct{}

// Read implements io.Reader: it reads nothing.
func (noRandom) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
