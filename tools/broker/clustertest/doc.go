// Package clustertest owns the adapter of the project's connection (package
// conn) to the cluster helpers of package broker, so tests that find, wait
// for and move stream and consumer leaders speak to the cluster through the
// same client the runtime uses; it refuses to be anything but that adapter:
// no connection outlives its one request, and nothing is retried.
package clustertest
