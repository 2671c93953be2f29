// Package wittest owns the random WIT types and values that the property
// tests of trigger/refhost (the payload codec) and trigger/wasmhost (the
// canonical ABI) draw: one generator, so that both are checked against the
// same population of types and values. It is imported by tests only.
package wittest
