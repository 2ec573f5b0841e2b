module github.com/inferscope/inferscope

go 1.26.8

require (
	github.com/klauspost/pgzip v1.3.0
	github.com/spf13/cobra v1.10.2
	github.com/valyala/fastjson v1.6.10
)

require github.com/klauspost/compress v1.20.3 // indirect

require (
	github.com/dustin/go-humanize v1.1.0
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
