// Package wasmhost owns the WebAssembly backend of the reference host:
// functions that are core WebAssembly modules, compiled once and run in a
// fresh instance per activation under a wall-time budget and a memory
// ceiling, with arguments and results passed by the Component Model's
// canonical ABI. It refuses, at registration, a module that does not
// validate, lacks an export, exports one of another type or imports
// anything it was not granted; and at activation, a guest that lies about
// a pointer, a length, a string or a case, as a platform failure with a
// typed cause, never a panic or an allocation the guest chose. It is the
// one package of the module that links wazero.
//
// A Runtime registers each Module's functions with a refhost.Host, which
// keeps owning the catalog (services, revisions, routes and their
// generations, publications, principals, declared contracts), admission,
// input accounting and the strict codec of the payload: Runtime.Register
// adds only refhost.Functions whose Func runs a guest, with Memory set to
// the module's ceiling so that ReserveInbound reserves it before any
// network. The trigger runtime sees only the refhost.Host.
//
// # One activation
//
//	refhost: final start check, payload decoded by the declared signature
//	  -> a fresh instance of the compiled module (its memory backed by an
//	     allocator that refuses growth past the ceiling), _initialize if
//	     the module is a WASI reactor
//	  -> lower: the arguments flattened, strings and lists written through
//	     cabi_realloc, the argument tuple through memory past 16 flat values
//	  -> call the export, under the activation's context: its deadline, its
//	     budget or the owner's stop closes the instance mid-call
//	  -> lift: the result read back, every pointer, length, character and
//	     case checked, at most 65,536 units
//	  -> close the instance; report (Config.OnActivation)
//
// Outcomes, as the reference host classifies the Func's error: nil is a
// success; err of a declared result<_, E> is a declared failure
// (*refhost.ApplicationError, its code the err case's name); a payload the
// signature refuses never reaches the guest (invalid arguments); a revision
// without the function, or whose types differ from a declared
// refhost.Contract, is an incompatible contract; a trap, a refused growth,
// proc_exit, a refused lowering or lifting are platform failures
// (*GuestError, with its Cause); a done context is a timeout or a
// cancellation. docs/GUESTS.md is the guest author's guide: the ABI as
// supported, a worked example per type family, the imports GrantWASI
// links, and the outcome table.
//
// A guest sees its arguments only: the activation's identity, its Trace
// and the event's trace link (refhost.Call.Link) reach no import, so a
// module cannot read them; the Report carries neither.
//
// Nothing is compiled or instantiated per binding: a module is compiled
// once at Register (wazero's compilation cache, in memory or in
// Config.CacheDir), and an instance exists only while an activation runs
// (Stats.Live).
package wasmhost
