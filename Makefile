# A thin wrapper over Meson for the two commands in README.md.
#   make demo     install what is missing, build, run a real step in the sandbox
#   make check    install what is missing, build (gcc, clang, ASan+UBSan, static), run every
#                 test, the kernel matrix under QEMU included
#   make install  PREFIX=/usr/local DESTDIR=   (builds, strips; never installs packages)
#   make deb      a Debian package in dist/ (dpkg-deb)
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build

.PHONY: all build deps demo check install deb bench static clean

all: deps build

build:
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) --prefix=$(PREFIX)
	ninja -C $(BUILD)

deps:
	@sh scripts/deps.sh

demo: all
	sh scripts/demo.sh $(BUILD)/stepbox

check:
	@sh scripts/deps.sh --test
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) --prefix=$(PREFIX)
	ninja -C $(BUILD)
	@[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
	ninja -C build-asan
	@[ -f build-static/build.ninja ] || meson setup build-static -Dstatic=true
	ninja -C build-static
	bash tests/run.sh $(BUILD)

install: build
	meson configure $(BUILD) -Dprefix=$(PREFIX)
	DESTDIR="$(DESTDIR)" meson install -C $(BUILD) --strip

deb: build
	sh scripts/mkdeb.sh $(BUILD) dist

static: deps
	@[ -f build-static/build.ninja ] || meson setup build-static -Dstatic=true
	ninja -C build-static

bench: all
	sh scripts/deps.sh --bench
	sh bench/run.sh $(BUILD)

clean:
	rm -rf build build-asan build-clang build-static dist
