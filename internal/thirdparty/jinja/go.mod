module github.com/ardanlabs/jinja

go 1.26.0
