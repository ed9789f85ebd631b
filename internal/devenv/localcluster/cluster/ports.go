package cluster

import (
	"fmt"
	"net"
)

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment
// ago. All listeners are held open until every port is chosen, so the kernel
// cannot hand the same port out twice within one call. Another process could
// still take a port before the component binds it; the supervisor then fails
// with the component's bind error in its log, and `up` reports it.
func FreePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("picking a free port on 127.0.0.1: %w", err)
		}
		listeners = append(listeners, l)
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, fmt.Errorf("picking a free port on 127.0.0.1: the listener's address %q is not TCP", l.Addr())
		}
		ports = append(ports, addr.Port)
	}
	return ports, nil
}
