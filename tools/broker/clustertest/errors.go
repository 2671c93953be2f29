package clustertest

import "errors"

var (
	// ErrStatus reports a reply that carries a status (503 no responders
	// and the like) instead of a payload.
	ErrStatus = errors.New("clustertest: reply with a status")
	// ErrNoNode reports that no node of the cluster runs unpaused.
	ErrNoNode = errors.New("clustertest: no running node")
)
