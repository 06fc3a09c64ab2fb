package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/inferscope/inferscope/web"
)

func init() {
	register(&command{name: "serve", summary: "start the web app (the default command)", run: runServe})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve [--addr HOST:PORT]", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; 0.0.0.0 exposes the app to the network")
	if err := parse(fs, args); err != nil {
		return err
	}
	lg := slog.New(slog.NewTextHandler(stderr, nil))
	srv, err := web.New(web.Options{Logger: lg})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	if host, _, _ := net.SplitHostPort(*addr); host == "" || host == "0.0.0.0" || host == "::" {
		lg.Warn("listening on all interfaces: anyone on your network can reach the app", "addr", *addr)
	}
	lg.Info("inferscope is running", "url", "http://"+ln.Addr().String()+"/")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	lg.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
