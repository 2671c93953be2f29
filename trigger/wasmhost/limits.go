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

	// maxExports bounds Module.Functions.
	maxExports = 256

	// maxTables bounds the tables a module defines, and maxTableElements
	// each one's size: a table declared without a maximum is given its
	// minimum as one, since nothing else would bound its growth. The
	// tables' elements are charged to the activation's memory
	// reservation, 8 bytes each.
	maxTables        = 16
	maxTableElements = 64 << 10

	// maxResultUnits bounds one lifted result: every value counts one unit and
	// every byte of a string one more. A list's length is checked against the
	// units left before its elements are allocated, so a guest never makes the
	// host allocate more than this bound allows, whatever lengths it returns.
	maxResultUnits = 64 << 10

	// maxOutputBytes bounds what one activation's stdout and stderr keep
	// together, when the Module grants output; the rest is counted and
	// dropped.
	maxOutputBytes = 4 << 10
)
