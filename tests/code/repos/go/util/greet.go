package util

const Prefix = "hello "

// Greet says hello.
func Greet(name string) string {
	return Prefix + name
}
