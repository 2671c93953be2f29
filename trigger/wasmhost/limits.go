package wasmhost

// Bounds of the WebAssembly host. Each has a test at the bound and one
// past it.
const (
	// PageSize is the WebAssembly page, in bytes.
	PageSize = 64 << 10

	// MaxMemoryPages bounds Module.MemoryPages, the memory ceiling of one
	// activation: 16,384 pages, 1 GiB.
	MaxMemoryPages = 16 << 10

	// MaxModuleBytes bounds Module.Binary: 64 MiB.
	MaxModuleBytes = 64 << 20

	// MaxExports bounds Module.Functions.
	MaxExports = 256

	// MaxOutputBytes bounds what one activation's stdout and stderr keep
	// together, when the Module grants output; the rest is counted and
	// dropped.
	MaxOutputBytes = 4 << 10
)
