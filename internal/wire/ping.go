package wire

// AppendPing appends "PING\r\n".
func AppendPing(dst []byte) []byte { return append(dst, "PING\r\n"...) }

// AppendPong appends "PONG\r\n".
func AppendPong(dst []byte) []byte { return append(dst, "PONG\r\n"...) }
