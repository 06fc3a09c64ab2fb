package web

// roompages.go: the classroom's HTTP side: /join (a student types the
// code), the QR code of the join link (/join/qr.svg), and the routes.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/views"
	"github.com/inferscope/inferscope/web/wire"
)

func (s *Server) roomRoutes(e *echo.Echo) {
	e.GET("/join", s.joinPage)
	e.GET("/join/qr.svg", s.joinQR)
	e.GET("/ws/room", s.rooms.HandleWS)
}

// joinPage shows the code form, or checks a code and sends the student to
// the presenter's page (lab, compare or a lesson) in follower mode.
func (s *Server) joinPage(c echo.Context) error {
	raw := c.QueryParam("code")
	if raw == "" {
		return render(c, http.StatusOK, views.Join(views.JoinData{}))
	}
	code := wire.NormalizeCode(raw)
	ip := room.ClientIP(c.Request())
	fail := func(status int, msg string) error {
		return render(c, status, views.Join(views.JoinData{Code: raw, Error: msg}))
	}
	// a wrong code counts toward the address's lockout only when a person
	// typed it here: a cross-site page (an <img src="/join?code=…">) must
	// not lock a student's network out of joining
	guess := func() {
		if !room.CrossSite(c.Request()) {
			s.rooms.Guard.Fail(ip)
		}
	}
	if wait := s.rooms.Guard.Blocked(ip); wait > 0 {
		return fail(http.StatusTooManyRequests, fmt.Sprintf("Too many wrong class codes from your network: try again in %d seconds.", int(wait.Seconds()+0.999)))
	}
	if !wire.ValidRoomCode(code) {
		guess()
		return fail(http.StatusNotFound, sentence(wire.CodeProblem(code))+" Check the code on the presenter's screen.")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	defer cancel()
	page, err := s.rooms.Lookup(ctx, code)
	if err != nil {
		code, msg := wire.CodeOf(err)
		status := http.StatusServiceUnavailable
		switch code {
		case wire.CodeRoomNotFound:
			guess()
			status = http.StatusNotFound
		case wire.CodeRoomClosed:
			status = http.StatusGone
		}
		return fail(status, sentence(msg))
	}
	if !wire.ValidRoomPage(page) {
		page = "/lab"
	}
	return c.Redirect(http.StatusSeeOther, page+"?room="+url.QueryEscape(code))
}

func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// joinQR draws the QR code of this server's join link for a code, as SVG
// (crisp on a projector). It does not say whether the room exists.
func (s *Server) joinQR(c echo.Context) error {
	code := wire.NormalizeCode(c.QueryParam("code"))
	if !wire.ValidRoomCode(code) {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("code must be a class code of %d letters and digits", wire.RoomCodeLen))
	}
	r := c.Request()
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	link := scheme + "://" + r.Host + "/join?code=" + code
	// a QR code costs ~0.4 ms of CPU: the ones drawn lately are kept
	// (a class's screens ask for the same one), and drawing a new one takes
	// a fair-queue slot like engine work, so a flood of made-up codes
	// gets its address's share of the cores and no more
	svg := s.rooms.QRCache.Get(link)
	if svg == nil {
		var err error
		if qerr := s.sched.Run(r.Context(), s.visitorOf(r), func() {
			var q *qrcode.QRCode
			if q, err = qrcode.New(link, qrcode.Medium); err == nil {
				svg = room.QRSVG(q.Bitmap(), link)
			}
		}); qerr != nil {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "the QR code was cancelled before the server had time for it: reload the page")
		}
		if err != nil {
			return fmt.Errorf("qr code: %w", err)
		}
		s.rooms.QRCache.Put(link, svg)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/svg+xml", svg)
}
