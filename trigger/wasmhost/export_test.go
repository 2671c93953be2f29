package wasmhost

// Bounds the external tests check at and past their limit; they are not
// part of the API (each is documented where it applies).
const (
	MaxExports       = maxExports
	MaxTableElements = maxTableElements
	MaxOutputBytes   = maxOutputBytes
)
