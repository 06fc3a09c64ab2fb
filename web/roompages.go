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

	"github.com/inferscope/inferscope/web/views"
)

func (s *Server) roomRoutes(e *echo.Echo) {
	e.GET("/join", s.joinPage)
	e.GET("/join/qr.svg", s.joinQR)
	e.GET("/ws/room", s.rooms.handleWS)
}

// joinPage shows the code form, or checks a code and sends the student to
// the presenter's page (lab, compare or a lesson) in follower mode.
func (s *Server) joinPage(c echo.Context) error {
	raw := c.QueryParam("code")
	if raw == "" {
		return render(c, http.StatusOK, views.Join(views.JoinData{}))
	}
	code := normalizeCode(raw)
	ip := clientIP(c.Request())
	fail := func(status int, msg string) error {
		return render(c, status, views.Join(views.JoinData{Code: raw, Error: msg}))
	}
	// a wrong code counts toward the address's lockout only when a person
	// typed it here: a cross-site page (an <img src="/join?code=…">) must
	// not lock a student's network out of joining
	guess := func() {
		if !crossSite(c.Request()) {
			s.rooms.guard.fail(ip)
		}
	}
	if wait := s.rooms.guard.blocked(ip); wait > 0 {
		return fail(http.StatusTooManyRequests, fmt.Sprintf("Too many wrong class codes from your network: try again in %d seconds.", int(wait.Seconds()+0.999)))
	}
	if !validRoomCode(code) {
		guess()
		return fail(http.StatusNotFound, sentence(codeProblem(code))+" Check the code on the presenter's screen.")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	defer cancel()
	page, err := s.rooms.lookup(ctx, code)
	if err != nil {
		code, msg := codeOf(err)
		status := http.StatusServiceUnavailable
		switch code {
		case CodeRoomNotFound:
			guess()
			status = http.StatusNotFound
		case CodeRoomClosed:
			status = http.StatusGone
		}
		return fail(status, sentence(msg))
	}
	if !validRoomPage(page) {
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
	code := normalizeCode(c.QueryParam("code"))
	if !validRoomCode(code) {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("code must be a class code of %d letters and digits", roomCodeLen))
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
	svg := s.rooms.qrCache.get(link)
	if svg == nil {
		var err error
		if qerr := s.sched.Run(r.Context(), s.visitorOf(r), func() {
			var q *qrcode.QRCode
			if q, err = qrcode.New(link, qrcode.Medium); err == nil {
				svg = qrSVG(q.Bitmap(), link)
			}
		}); qerr != nil {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "the QR code was cancelled before the server had time for it: reload the page")
		}
		if err != nil {
			return fmt.Errorf("qr code: %w", err)
		}
		s.rooms.qrCache.put(link, svg)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/svg+xml", svg)
}
