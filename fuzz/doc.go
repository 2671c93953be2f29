// Package fuzz holds the fuzz targets that cross packages: what wire encodes
// for a client, relayed as the server would to a subscriber, must come out of
// parser identically, however the bytes are split into reads. It has no
// non-test code; its seed corpora live under testdata/fuzz/ and plain
// go test replays them.
package fuzz
