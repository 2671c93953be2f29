package refhost

// Bounds the external tests check at and past their limit; they are not
// part of the API (each is documented where it applies).
const (
	MaxPayloadBytes      = maxPayloadBytes
	MaxParams            = maxParams
	MaxFieldNameLen      = maxFieldNameLen
	MaxTypeTextBytes     = maxTypeTextBytes
	MaxIdentifierLen     = maxIdentifierLen
	MaxDeclaredFailures  = maxDeclaredFailures
	MaxContractFunctions = maxContractFunctions
)
