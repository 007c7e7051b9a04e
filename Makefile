# A thin wrapper over Meson for the two commands in README.md.
#   make demo     install what is missing, build, run a real step in the sandbox
#   make check    install what is missing, build (gcc, clang, ASan+UBSan, static), run every
#                 test, the kernel matrix under QEMU included
#   make install  PREFIX=/usr/local DESTDIR=
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build

.PHONY: all deps demo check install bench static clean

all: deps
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

install: all
	meson configure $(BUILD) -Dprefix=$(PREFIX)
	DESTDIR="$(DESTDIR)" meson install -C $(BUILD)

static: deps
	@[ -f build-static/build.ninja ] || meson setup build-static -Dstatic=true
	ninja -C build-static

bench: all
	sh scripts/deps.sh --test
	sh bench/run.sh $(BUILD)

clean:
	rm -rf build build-asan build-clang build-static
