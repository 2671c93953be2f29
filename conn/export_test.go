package conn

// ProbeWaits reports how many of Check's reads had to wait for input.
func ProbeWaits(c *Conn) uint64 { return c.rd.waits }
