package conn

// ThreadSocketInUse reports whether c's socket is a thread socket.
func ThreadSocketInUse(c *Conn) bool {
	_, ok := c.raw.(*threadSocket)
	return ok
}
