package wasmhost_test

// The guests under testdata/: the .wat sources agree with the committed
// .wasm, every module has the core interface its comment block states, and
// the guests behave as documented when run by plain wazero, independently of
// the host in this package.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

const (
	// guestDir holds every guest's .wat and the .wasm wat2wasm makes of it.
	guestDir = "testdata/guests"

	// requireWABTEnv, when non-empty, turns a missing wabt tool from a skip
	// into a failure; .ci/run sets it.
	requireWABTEnv = "LATENT_NATS_REQUIRE_WABT"

	// guestBlockTimeout bounds the calls that are meant never to return.
	guestBlockTimeout = 100 * time.Millisecond

	// guestMemoryPages is the memory ceiling of the .wat guests' smoke
	// tests.
	guestMemoryPages = 40

	// goGuestMemoryPages is the memory ceiling of the Go guest's smoke
	// tests: room for its runtime, not for "grow".
	goGuestMemoryPages = 128
)

// Core types as describeModule writes them.
const (
	sigMemory  = "(memory)"
	sigRealloc = "(func (param i32 i32 i32 i32) (result i32))"
	sigHandle  = "(func (param i32 i32) (result i32))"
	sigU32     = "(func (result i32))"
)

// guestInterfaces is each guest's core interface: "export NAME" or
// "import MODULE NAME" -> type. A guest that is not good differs from the
// good interface (memory, cabi_realloc, handle) as its comment says.
var guestInterfaces = map[string]map[string]string{
	"handler": goodInterface(map[string]string{
		"export handle": sigHandle,
		"export calls":  sigU32,
	}),
	"types": goodInterface(map[string]string{
		"export echo-bool":       "(func (param i32) (result i32))",
		"export echo-s8":         "(func (param i32) (result i32))",
		"export echo-u16":        "(func (param i32) (result i32))",
		"export echo-s32":        "(func (param i32) (result i32))",
		"export echo-u64":        "(func (param i64) (result i64))",
		"export echo-f32":        "(func (param f32) (result f32))",
		"export echo-f64":        "(func (param f64) (result f64))",
		"export echo-char":       "(func (param i32) (result i32))",
		"export echo-enum":       "(func (param i32) (result i32))",
		"export low-u64":         "(func (param i64) (result i32))",
		"export neg-f64":         "(func (param f64) (result i32))",
		"export echo-string":     "(func (param i32 i32) (result i32))",
		"export echo-list-u32":   "(func (param i32 i32) (result i32))",
		"export echo-record":     "(func (param i32 i64 i32 i32) (result i32))",
		"export echo-option-u32": "(func (param i32 i32) (result i32))",
		"export echo-variant":    "(func (param i32 i32) (result i32))",
		"export echo-result":     "(func (param i32 i64 i32) (result i32))",
		"export echo-tuple":      "(func (param i32 i32 f64) (result i32))",
		"export sum16":           "(func (param" + strings.Repeat(" i32", 16) + ") (result i32))",
		"export sum17":           "(func (param i32) (result i32))",
	}),
	"loop": goodInterface(map[string]string{"export handle": sigHandle}),
	"bomb": goodInterface(map[string]string{
		"export handle":       sigHandle,
		"export grow-then-ok": sigHandle,
		"export pages":        sigU32,
	}),
	"trap":        goodInterface(map[string]string{"export handle": sigHandle}),
	"dirty":       goodInterface(map[string]string{"export handle": sigHandle}),
	"table":       goodInterface(map[string]string{"export handle": sigHandle}),
	"recurse":     goodInterface(map[string]string{"export handle": sigHandle}),
	"bigtable":    goodInterface(map[string]string{"export handle": sigHandle}),
	"spin":        goodInterface(map[string]string{"export spin": "(func (param i32) (result i32))"}),
	"badptr":      goodInterface(map[string]string{"export handle": sigHandle}),
	"hugestr":     goodInterface(map[string]string{"export handle": sigHandle}),
	"badrealloc":  goodInterface(map[string]string{"export handle": sigHandle}),
	"badrealloc2": goodInterface(map[string]string{"export handle": sigHandle}),
	"startfn":     goodInterface(map[string]string{"export handle": sigHandle}),
	"import": goodInterface(map[string]string{
		"export handle":   sigHandle,
		"import env evil": "(func)",
	}),
	"noexport": {"export memory": sigMemory, "export cabi_realloc": sigRealloc},
	"wrongsig": {
		"export memory":       sigMemory,
		"export cabi_realloc": sigRealloc,
		"export handle":       "(func (param i64) (result i32))",
	},
	"nomemory": {"export cabi_realloc": sigRealloc, "export handle": sigHandle},
	"wasi": goodInterface(map[string]string{
		"export handle": sigHandle,
		"import wasi_snapshot_preview1 proc_exit":   "(func (param i32))",
		"import wasi_snapshot_preview1 poll_oneoff": "(func (param i32 i32 i32 i32) (result i32))",
	}),
	"norealloc": {"export memory": sigMemory, "export handle": sigHandle},
}

// goodInterface is memory and cabi_realloc plus functions.
func goodInterface(functions map[string]string) map[string]string {
	m := map[string]string{"export memory": sigMemory, "export cabi_realloc": sigRealloc}
	maps.Copy(m, functions)
	return m
}

// guestNames lists the guests under guestDir by their .wat, without it.
func guestNames(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(guestDir, "*.wat"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".wat"))
	}
	return names
}

// readGuest returns the committed .wasm of the guest name.
func readGuest(t testing.TB, name string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join(guestDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// wabtTool returns the path of the wabt tool name, skipping the test when
// it is not on PATH, or failing it when requireWABTEnv is set.
func wabtTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(requireWABTEnv) != "" {
		t.Fatalf("%s is not on PATH and %s is set: install Debian's wabt", name, requireWABTEnv)
	}
	t.Skipf("%s is not on PATH: install Debian's wabt, or set %s=1 to make this a failure", name, requireWABTEnv)
	return ""
}

func TestGuestsMatchText(t *testing.T) {
	wat2wasm := wabtTool(t, "wat2wasm")
	wasmPaths, err := filepath.Glob(filepath.Join(guestDir, "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	var wasmNames []string
	for _, p := range wasmPaths {
		wasmNames = append(wasmNames, strings.TrimSuffix(filepath.Base(p), ".wasm"))
	}
	if diff := cmp.Diff(guestNames(t), wasmNames); diff != "" {
		t.Errorf("every .wat has its .wasm and no .wasm lacks a .wat (-wat +wasm):\n%s", diff)
	}
	for _, name := range guestNames(t) {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name+".wasm")
			cmd := exec.Command(wat2wasm, filepath.Join(guestDir, name+".wat"), "-o", out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("wat2wasm: %v\n%s", err, msg)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, readGuest(t, name)) {
				t.Errorf("%s.wasm is not what wat2wasm makes of %s.wat: run make guests", name, name)
			}
		})
	}
}

func TestGuestsValidate(t *testing.T) {
	ctx := t.Context()
	r := describeRuntime(t, ctx)

	t.Run("table lists every guest", func(t *testing.T) {
		if diff := cmp.Diff(guestNames(t), slices.Sorted(maps.Keys(guestInterfaces))); diff != "" {
			t.Errorf("guests (-files +guestInterfaces):\n%s", diff)
		}
	})
	for _, name := range guestNames(t) {
		t.Run(name, func(t *testing.T) {
			got := describeModule(t, ctx, r, readGuest(t, name))
			if diff := cmp.Diff(guestInterfaces[name], got); diff != "" {
				t.Errorf("core interface (-guestInterfaces +binary):\n%s", diff)
			}
			if diff := cmp.Diff(commentInterface(t, name), got); diff != "" {
				t.Errorf("core interface (-%s.wat's comment block +binary):\n%s", name, diff)
			}
		})
	}
	t.Run("wasm-validate", func(t *testing.T) {
		validate := wabtTool(t, "wasm-validate")
		for _, name := range guestNames(t) {
			t.Run(name, func(t *testing.T) {
				cmd := exec.Command(validate, filepath.Join(guestDir, name+".wasm"))
				if msg, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("wasm-validate: %v\n%s", err, msg)
				}
			})
		}
	})
}

// TestGuestsDefects names what makes each malformed guest unfit for the
// host: each is valid WebAssembly, so only its interface gives it away.
func TestGuestsDefects(t *testing.T) {
	ctx := t.Context()
	r := describeRuntime(t, ctx)
	tests := []struct {
		guest, item string
		want        string // "" when the item is missing
	}{
		{guest: "noexport", item: "export handle", want: ""},
		{guest: "wrongsig", item: "export handle", want: "(func (param i64) (result i32))"},
		{guest: "nomemory", item: "export memory", want: ""},
		{guest: "norealloc", item: "export cabi_realloc", want: ""},
		{guest: "import", item: "import env evil", want: "(func)"},
	}
	for _, tt := range tests {
		t.Run(tt.guest, func(t *testing.T) {
			if got := describeModule(t, ctx, r, readGuest(t, tt.guest))[tt.item]; got != tt.want {
				t.Errorf("%s: got %q, want %q", tt.item, got, tt.want)
			}
		})
	}
}

// describeRuntime is a runtime for describeModule: wazero's interpreter,
// which compiles the 1.8 MB Go guest in a fraction of the compiler's time.
func describeRuntime(t testing.TB, ctx context.Context) wazero.Runtime {
	t.Helper()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { r.Close(ctx) })
	return r
}

// describeModule compiles wasm with r and returns its imports and exports
// as guestInterfaces writes them.
func describeModule(t testing.TB, ctx context.Context, r wazero.Runtime, wasm []byte) map[string]string {
	t.Helper()
	m, err := r.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	d := map[string]string{}
	for name, f := range m.ExportedFunctions() {
		d["export "+name] = funcType(f)
	}
	for name := range m.ExportedMemories() {
		d["export "+name] = sigMemory
	}
	for _, f := range m.ImportedFunctions() {
		module, name, _ := f.Import()
		d["import "+module+" "+name] = funcType(f)
	}
	for _, mem := range m.ImportedMemories() {
		module, name, _ := mem.Import()
		d["import "+module+" "+name] = sigMemory
	}
	return d
}

// funcType writes f's type in the text format: (func (param i32) (result i32)).
func funcType(f api.FunctionDefinition) string {
	var b strings.Builder
	b.WriteString("(func")
	for _, types := range []struct {
		word string
		vt   []api.ValueType
	}{{"param", f.ParamTypes()}, {"result", f.ResultTypes()}} {
		if len(types.vt) == 0 {
			continue
		}
		b.WriteString(" (" + types.word)
		for _, vt := range types.vt {
			b.WriteString(" " + api.ValueTypeName(vt))
		}
		b.WriteString(")")
	}
	b.WriteString(")")
	return b.String()
}

// commentLine is a line of a .wat's leading comment block that states an
// import or export: ";;   export handle (func (param i32 i32) (result i32))".
var commentLine = regexp.MustCompile(`^;;\s+((?:export|import) [^(]+?) (\((?:func|memory)\b.*\))\s*$`)

// commentInterface returns the imports and exports that the leading
// comment block of the guest name's .wat states.
func commentInterface(t testing.TB, name string) map[string]string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(guestDir, name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	d := map[string]string{}
	lines := bufio.NewScanner(bytes.NewReader(text))
	for lines.Scan() && strings.HasPrefix(lines.Text(), ";;") {
		if m := commentLine.FindStringSubmatch(lines.Text()); m != nil {
			d[m[1]] = m[2]
		}
	}
	return d
}

// guestRuntime is a wazero runtime that ends calls at their context's
// deadline and caps every memory at pages.
func guestRuntime(t testing.TB, ctx context.Context, pages uint32) wazero.Runtime {
	t.Helper()
	cfg := wazero.NewRuntimeConfig().WithCloseOnContextDone(true).WithMemoryLimitPages(pages)
	r := wazero.NewRuntimeWithConfig(ctx, cfg)
	t.Cleanup(func() { r.Close(ctx) })
	return r
}

// guestInstance instantiates wasm anonymously, so that one runtime holds
// many instances of it, and closes it when the test ends.
func guestInstance(t testing.TB, ctx context.Context, r wazero.Runtime, wasm []byte) api.Module {
	t.Helper()
	m, err := r.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	return m
}

// guestWrite copies b into a block from the guest's cabi_realloc(0, 0,
// align, len(b)) and returns its address.
func guestWrite(t testing.TB, ctx context.Context, m api.Module, align uint32, b []byte) uint64 {
	t.Helper()
	res, err := m.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, uint64(align), uint64(len(b)))
	if err != nil {
		t.Fatalf("cabi_realloc: %v", err)
	}
	if !m.Memory().Write(uint32(res[0]), b) {
		t.Fatalf("cabi_realloc returned %#x: out of bounds for %d bytes", res[0], len(b))
	}
	return res[0]
}

// callOutcome names how a call ended when it did not return: "deadline"
// (closed at its context's deadline), "exit N" (proc_exit(N)) or "trap".
func callOutcome(err error) string {
	var exit *sys.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded:
		return "deadline"
	case errors.As(err, &exit):
		return fmt.Sprintf("exit %d", exit.ExitCode())
	default:
		return "trap"
	}
}

// callValue calls fn and returns "value 0x..." of its one result, or how
// the call ended.
func callValue(ctx context.Context, m api.Module, fn string, params ...uint64) string {
	res, err := m.ExportedFunction(fn).Call(ctx, params...)
	if err != nil {
		return callOutcome(err)
	}
	return value(res[0])
}

// value is callValue's text for a result v.
func value(v uint64) string { return fmt.Sprintf("value %#x", v) }

// callArea calls fn, which returns a pointer to its result area, and
// returns "area" and the area's size bytes in hex, or how the call ended.
func callArea(ctx context.Context, m api.Module, fn string, size uint32, params ...uint64) string {
	res, err := m.ExportedFunction(fn).Call(ctx, params...)
	if err != nil {
		return callOutcome(err)
	}
	area, ok := m.Memory().Read(uint32(res[0]), size)
	if !ok {
		return fmt.Sprintf("area %#x out of bounds", res[0])
	}
	return fmt.Sprintf("area % x", area)
}

// callHandle writes arg and calls handle (string) -> result<_, enum>.
func callHandle(t testing.TB, ctx context.Context, m api.Module, arg string) string {
	t.Helper()
	ptr := guestWrite(t, ctx, m, 1, []byte(arg))
	return callArea(ctx, m, "handle", 2, ptr, uint64(len(arg)))
}

// blocking returns ctx with a guestBlockTimeout deadline, for a call that
// is meant never to return.
func blocking(t testing.TB, ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, guestBlockTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestGuestHandlerSmoke(t *testing.T) {
	ctx := t.Context()
	r := guestRuntime(t, ctx, guestMemoryPages)
	wasm := readGuest(t, "handler")
	tests := []struct {
		name string
		run  func(t *testing.T, m api.Module) string
		want string
	}{
		{name: "ok", want: "area 00 00, calls " + value(1), run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "ok") + ", calls " + callValue(ctx, m, "calls")
		}},
		{name: "fail", want: "area 01 00", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "fail")
		}},
		{name: "retry", want: "trap", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "retry")
		}},
		{name: "block", want: "deadline", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, blocking(t, ctx), m, "block")
		}},
		{name: "grow", want: fmt.Sprintf("trap at %d pages", guestMemoryPages), run: func(t *testing.T, m api.Module) string {
			return fmt.Sprintf("%s at %d pages", callHandle(t, ctx, m, "grow"), m.Memory().Size()/(64<<10))
		}},
		{name: "reused", want: "area 00 00, then trap", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "ok") + ", then " + callHandle(t, ctx, m, "ok")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.run(t, guestInstance(t, ctx, r, wasm)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGuestTypesSmoke(t *testing.T) {
	ctx := t.Context()
	r := guestRuntime(t, ctx, guestMemoryPages)
	wasm := readGuest(t, "types")
	str := func(t *testing.T, m api.Module, s string) []uint64 {
		return []uint64{guestWrite(t, ctx, m, 1, []byte(s)), uint64(len(s))}
	}
	u32s := func(vs ...uint32) []byte {
		var b []byte
		for _, v := range vs {
			b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		return b
	}
	seq := func(n uint32) []uint64 {
		var vs []uint64
		for i := range n {
			vs = append(vs, uint64(i+1))
		}
		return vs
	}
	// The first block cabi_realloc hands out starts at 1024: 00 04 00 00.
	tests := []struct {
		name string
		run  func(t *testing.T, m api.Module) string
		want string
	}{
		{name: "echo-bool", want: value(1), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-bool", 1)
		}},
		{name: "echo-s8", want: value(api.EncodeI32(-5)), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-s8", api.EncodeI32(-5))
		}},
		{name: "echo-u16", want: value(0xFFFF), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-u16", 0xFFFF)
		}},
		{name: "echo-s32", want: value(api.EncodeI32(-1 << 31)), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-s32", api.EncodeI32(-1<<31))
		}},
		{name: "echo-u64", want: value(1<<64 - 1), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-u64", 1<<64-1)
		}},
		{name: "echo-f32", want: value(api.EncodeF32(1.5)), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-f32", api.EncodeF32(1.5))
		}},
		{name: "echo-f64", want: value(api.EncodeF64(-2.25)), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-f64", api.EncodeF64(-2.25))
		}},
		{name: "echo-char", want: value(0x1F600), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-char", 0x1F600)
		}},
		{name: "echo-enum", want: value(2), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "echo-enum", 2)
		}},
		{name: "echo-string", want: "area 00 04 00 00 06 00 00 00", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-string", 8, str(t, m, "héllo")...)
		}},
		{name: "echo-list-u32", want: "area 00 04 00 00 03 00 00 00", run: func(t *testing.T, m api.Module) string {
			ptr := guestWrite(t, ctx, m, 4, u32s(1, 2, 3))
			return callArea(ctx, m, "echo-list-u32", 8, ptr, 3)
		}},
		{name: "echo-list-u32 misaligned", want: "trap", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-list-u32", 8, 1026, 0)
		}},
		{
			name: "echo-record",
			want: "area 07 00 00 00 00 00 00 00 08 07 06 05 04 03 02 01 00 04 00 00 03 00 00 00",
			run: func(t *testing.T, m api.Module) string {
				return callArea(ctx, m, "echo-record", 24, append([]uint64{7, 0x0102030405060708}, str(t, m, "hey")...)...)
			},
		},
		{name: "echo-option-u32 some", want: "area 01 00 00 00 2a 00 00 00", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-option-u32", 8, 1, 42)
		}},
		{name: "echo-option-u32 none", want: "area 00 00 00 00 00 00 00 00", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-option-u32", 8, 0, 0)
		}},
		{name: "echo-variant b", want: "area 01 00 00 00 00 00 c0 3f", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-variant", 8, 1, api.EncodeF32(1.5))
		}},
		{name: "echo-result ok", want: "area 00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-result", 16, 0, 1<<64-1, 0)
		}},
		{name: "echo-result err", want: "area 01 00 00 00 00 00 00 00 00 04 00 00 02 00 00 00", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-result", 16, append([]uint64{1}, str(t, m, "no")...)...)
		}},
		{name: "echo-tuple", want: "area c8 00 fe ff 00 00 00 00 00 00 00 00 00 00 04 40", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "echo-tuple", 16, 200, api.EncodeI32(-2), api.EncodeF64(2.5))
		}},
		{name: "sum16", want: value(136), run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "sum16", seq(16)...)
		}},
		{name: "sum17", want: value(153), run: func(t *testing.T, m api.Module) string {
			tuple := u32s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)
			return callValue(ctx, m, "sum17", guestWrite(t, ctx, m, 4, tuple))
		}},
		{name: "sum17 misaligned", want: "trap", run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "sum17", 1026)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.run(t, guestInstance(t, ctx, r, wasm)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGuestHostileSmoke shows each hostile guest misbehaving as its comment
// says, so that a host test that sees it refused knows why.
func TestGuestHostileSmoke(t *testing.T) {
	ctx := t.Context()
	r := guestRuntime(t, ctx, guestMemoryPages)
	tests := []struct {
		guest string
		run   func(t *testing.T, wasm []byte) string
		want  string
	}{
		{guest: "loop", want: "deadline", run: func(t *testing.T, wasm []byte) string {
			return callHandle(t, blocking(t, ctx), guestInstance(t, ctx, r, wasm), "x")
		}},
		{guest: "trap", want: "trap", run: func(t *testing.T, wasm []byte) string {
			return callHandle(t, ctx, guestInstance(t, ctx, r, wasm), "x")
		}},
		{guest: "bomb", want: "trap", run: func(t *testing.T, wasm []byte) string {
			return callHandle(t, ctx, guestInstance(t, ctx, r, wasm), "x")
		}},
		{
			// 1 page, then 17 and 33: 49 is past guestMemoryPages.
			guest: "bomb",
			want:  "area 00 00, " + value(33),
			run: func(t *testing.T, wasm []byte) string {
				m := guestInstance(t, ctx, r, wasm)
				ptr := guestWrite(t, ctx, m, 1, []byte("x"))
				return callArea(ctx, m, "grow-then-ok", 2, ptr, 1) + ", " + callValue(ctx, m, "pages")
			},
		},
		{guest: "badptr", want: "area 0xfffffff0 out of bounds", run: func(t *testing.T, wasm []byte) string {
			return callHandle(t, ctx, guestInstance(t, ctx, r, wasm), "x")
		}},
		{guest: "hugestr", want: "area 00 00 00 00 ff ff ff ff", run: func(t *testing.T, wasm []byte) string {
			m := guestInstance(t, ctx, r, wasm)
			ptr := guestWrite(t, ctx, m, 1, []byte("x"))
			return callArea(ctx, m, "handle", 8, ptr, 1)
		}},
		{guest: "badrealloc", want: value(0xFFFFFFFF), run: func(t *testing.T, wasm []byte) string {
			return callValue(ctx, guestInstance(t, ctx, r, wasm), "cabi_realloc", 0, 0, 1, 4)
		}},
		{guest: "badrealloc2", want: value(3), run: func(t *testing.T, wasm []byte) string {
			return callValue(ctx, guestInstance(t, ctx, r, wasm), "cabi_realloc", 0, 0, 4, 4)
		}},
		{guest: "startfn", want: "deadline", run: func(t *testing.T, wasm []byte) string {
			_, err := r.InstantiateWithConfig(blocking(t, ctx), wasm, wazero.NewModuleConfig().WithName(""))
			return callOutcome(err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.guest, func(t *testing.T) {
			if got := tt.run(t, readGuest(t, tt.guest)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// goGuest builds tools/demo/guest once for the test binary's life.
var goGuest = sync.OnceValues(func() ([]byte, error) {
	goBinary, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "goguest")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "goguest.wasm")
	cmd := exec.Command(goBinary, "build", "-buildmode=c-shared", "-o", out, "../../tools/demo/guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build tools/demo/guest: %w\n%s", err, msg)
	}
	return os.ReadFile(out)
})

// buildGoGuest returns tools/demo/guest built as a WASI reactor
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared) by the go command
// on PATH, which go test puts first: the toolchain running this test.
func buildGoGuest(t testing.TB) []byte {
	t.Helper()
	wasm, err := goGuest()
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

func TestGoGuestBuilds(t *testing.T) {
	ctx := t.Context()
	r := describeRuntime(t, ctx)
	got := describeModule(t, ctx, r, buildGoGuest(t))

	imports := map[string]bool{}
	for _, item := range slices.Sorted(maps.Keys(got)) {
		fields := strings.Fields(item)
		if fields[0] == "import" {
			imports[fields[1]] = true
			delete(got, item)
			t.Logf("Go guest: %s", item)
		}
	}
	if diff := cmp.Diff(map[string]bool{"wasi_snapshot_preview1": true}, imports); diff != "" {
		t.Errorf("imported modules (-want +got):\n%s", diff)
	}
	want := goodInterface(map[string]string{
		"export _initialize": "(func)",
		"export place":       "(func (param i32 i32 i32) (result i32))",
		"export cancel":      "(func (param i32 i32) (result i32))",
		"export charge":      "(func (param i64 i32 i32) (result i32))",
		"export handle":      sigHandle,
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exports (-want +got):\n%s", diff)
	}
}

// goGuestInstance instantiates the compiled Go guest beside r's WASI and
// calls its _initialize, as the host does.
func goGuestInstance(t testing.TB, ctx context.Context, r wazero.Runtime, compiled wazero.CompiledModule) api.Module {
	t.Helper()
	m, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	if _, err := m.ExportedFunction("_initialize").Call(ctx); err != nil {
		t.Fatalf("_initialize: %v", err)
	}
	return m
}

func TestGoGuestSmoke(t *testing.T) {
	ctx := t.Context()
	wasm := buildGoGuest(t)
	r := guestRuntime(t, ctx, goGuestMemoryPages)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	start := time.Now()
	compiled, err := r.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Go guest: %d bytes, CompileModule took %v", len(wasm), time.Since(start))

	t.Run("pages", func(t *testing.T) {
		m := goGuestInstance(t, ctx, r, compiled)
		t.Logf("Go guest: %d pages after _initialize", m.Memory().Size()/(64<<10))
		order := guestWrite(t, ctx, m, 1, []byte("o-1"))
		if got, want := callArea(ctx, m, "place", 8, order, 3, 1), "area 00 00 00 00 01 00 00 00"; got != want {
			t.Errorf("place: got %q, want %q", got, want)
		}
		t.Logf("Go guest: %d pages after one place", m.Memory().Size()/(64<<10))
	})

	tests := []struct {
		name string
		run  func(t *testing.T, m api.Module) string
		want string
	}{
		{name: "cancel twice", want: value(1) + ", " + value(2), run: func(t *testing.T, m api.Module) string {
			order := guestWrite(t, ctx, m, 1, []byte("o-1"))
			return callValue(ctx, m, "cancel", order, 3) + ", " + callValue(ctx, m, "cancel", order, 3)
		}},
		{name: "cancel not UTF-8", want: "trap", run: func(t *testing.T, m api.Module) string {
			return callValue(ctx, m, "cancel", guestWrite(t, ctx, m, 1, []byte{0xff}), 1)
		}},
		{name: "place out of stock", want: "area 01 00 00 00 00 00 00 00", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "place", 8, guestWrite(t, ctx, m, 1, []byte("o-1")), 3, 101)
		}},
		{name: "charge", want: "area 00 00 00 00 01 00 00 00", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "charge", 8, 7, 250, 1)
		}},
		{name: "charge declined", want: "area 01 00 00 00 00 00 00 00", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "charge", 8, 7, 0, 0)
		}},
		{name: "charge ledger unavailable", want: "trap", run: func(t *testing.T, m api.Module) string {
			return callArea(ctx, m, "charge", 8, 13, 250, 0)
		}},
		{name: "handle ok", want: "area 00 00", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "ok")
		}},
		{name: "handle fail", want: "area 01 00", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "fail")
		}},
		{name: "handle retry", want: "trap", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "retry")
		}},
		{name: "handle block", want: "deadline", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, blocking(t, ctx), m, "block")
		}},
		{name: "handle grow", want: "trap", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "grow")
		}},
		{name: "handle reused", want: "area 00 00, then trap", run: func(t *testing.T, m api.Module) string {
			return callHandle(t, ctx, m, "ok") + ", then " + callHandle(t, ctx, m, "ok")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.run(t, goGuestInstance(t, ctx, r, compiled)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
