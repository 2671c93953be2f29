//go:build !linux

package main

// stopWithParent does nothing where the kernel cannot signal a process
// when its parent dies; it reports true.
func stopWithParent() bool { return true }
