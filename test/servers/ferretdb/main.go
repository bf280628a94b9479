// FerretDB for the tests: FerretDB 1.x embedded with its SQLite backend,
// listening on the loopback address it is given (port 0 picks a free one).
// It prints "listening <host:port>" once it accepts connections and exits
// when its standard input closes, so a test runner that dies takes it along.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ferretdb-test-server <host:port> <sqlite directory>")
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	server, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: os.Args[1]},
		Handler:   "sqlite",
		SQLiteURL: "file:" + os.Args[2] + "/",
		Logger:    logger,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx) }()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	// MongoDBURI waits until Run has bound the listener.
	go func() { fmt.Println("listening " + server.MongoDBURI()) }()
	if err := <-done; err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
