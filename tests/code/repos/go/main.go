package main

import (
	"fmt"

	"example.com/shop/util"
)

// Server serves requests.
type Server struct {
	port int
}

// Start runs the server.
func (s *Server) Start() {
	fmt.Println(util.Greet("x"))
}

func main() {
	s := &Server{port: 80}
	s.Start()
}
