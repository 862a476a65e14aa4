#!/bin/sh
# installcheck.sh - `make installcheck': the installed mgpu taken as its
# users take it.  A program of theirs (PROGRAM.c) is built two ways and run:
#   pkg-config, shared:  cc t.c $(pkg-config --cflags --libs mgpu)  (the README's line)
#   pkg-config, static:  the same with --static, and -l:libmgpu.a for -lmgpu
# Each program's dynamic section must name libmgpu.so's soname, or no
# libmgpu at all, and its run must step two host devices bit for bit like
# the C reference.  Then: libmgpu.so has its versioned soname, libmgpu.a
# goes whole into a shared object (it is position-independent), each
# installed <mgpu/NAME.h> compiles alone, and no private header is
# installed.  A library the build did not make (--disable-shared or
# --disable-static, as LIBMGPU.LA says) must not be installed, and the
# cases that need it skip.  Installs
# nothing; reads the tree `make install' made under $DESTDIR$prefix.
# Prints a TAP line a case (tests/lib.sh's tap) and exits 1 if one failed.
# Usage: installcheck.sh PROGRAM.c LIBMGPU.LA
# Environment: CC, PKG_CONFIG, pkgconfigdir (as configured), DESTDIR.
set -u
src=$1 la=$2
. "$(dirname "$0")/lib.sh" # tap, needed
: "${CC:=cc}"
: "${PKG_CONFIG:=pkg-config}"
: "${pkgconfigdir:?pkgconfigdir is not set}"
DESTDIR=${DESTDIR-}

pc=$DESTDIR$pkgconfigdir/mgpu.pc
if [ ! -f "$pc" ]; then
    echo "installcheck: no $pc: run make install first" >&2
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-installcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "$DESTDIR" ]; then
    # A staged install: the .pc names the final paths, which exist only under
    # DESTDIR.  Read a copy whose absolute install paths are under DESTDIR
    # (PKG_CONFIG_SYSROOT_DIR would also move the CUDA toolkit's -L).
    mkdir "$tmp/pkgconfig"
    sed -e "s|^prefix=/|prefix=$DESTDIR/|" -e "s|^exec_prefix=/|exec_prefix=$DESTDIR/|" \
        -e "s|^libdir=/|libdir=$DESTDIR/|" -e "s|^includedir=/|includedir=$DESTDIR/|" \
        "$pc" >"$tmp/pkgconfig/mgpu.pc"
    PKG_CONFIG_PATH=$tmp/pkgconfig
else
    PKG_CONFIG_PATH=$DESTDIR$pkgconfigdir
fi
export PKG_CONFIG_PATH

# The mgpu that pkg-config finds must be the one just installed.
found=$($PKG_CONFIG --variable=pcfiledir mgpu)
if [ "$found" != "$PKG_CONFIG_PATH" ]; then
    echo "installcheck: $PKG_CONFIG found mgpu in $found, not in $PKG_CONFIG_PATH" >&2
    exit 1
fi
version=$($PKG_CONFIG --modversion mgpu)
prefix=$($PKG_CONFIG --variable=prefix mgpu)
libdir=$($PKG_CONFIG --variable=libdir mgpu)
includedir=$($PKG_CONFIG --variable=includedir mgpu)
# What the build made: libmgpu.so's soname (none with --disable-shared) and
# libmgpu.a (none with --disable-static).
la_value() {
    sed -n "s/^$1='\(.*\)'\$/\1/p" "$la"
}
soname=$(la_value dlname)
archive=$(la_value old_library)

# run_consumer DESCRIPTION PROGRAM shared|static [FOLDER]: PROGRAM took
# that libmgpu, and runs like the reference; FOLDER, where the loader does
# not look for libmgpu.so on its own, is put on LD_LIBRARY_PATH.
run_consumer() {
    took=$(needed "$2" | grep '^libmgpu\.')
    case $3 in
    shared) [ "$took" = "$soname" ] ;;
    static) [ -z "$took" ] ;;
    esac || {
        tap 1 "$1: takes the $3 library (dynamic section: ${took:-no libmgpu})"
        return
    }
    path=${4:-}
    [ -n "${LD_LIBRARY_PATH:-}" ] && path=${path:+$path:}$LD_LIBRARY_PATH
    out=$(LD_LIBRARY_PATH=$path "$2" 2>&1)
    code=$?
    case $out in
    "mgpu $version, host backend, 2 devices, "*": 0 cells differ from the reference") ;;
    *) code=1 ;;
    esac
    tap $code "$1: takes the $3 library${took:+ ($took)} and runs: $out"
}
cp "$src" "$tmp/t.c"
cd "$tmp"

# --------------------------------------------------------------- libraries
if [ -n "$soname" ]; then
    real=$(readelf -d "$libdir/libmgpu.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
    [ "$real" = "$soname" ] && [ -f "$libdir/$soname" ]
    tap $? "libmgpu.so, soname $soname, in $libdir (soname: ${real:-none})"
else
    [ ! -e "$libdir/libmgpu.so" ]
    tap $? "no libmgpu.so installed by a build without it (--disable-shared)"
fi
if [ -n "$archive" ]; then
    $CC -shared -o whole.so -Wl,--whole-archive "$libdir/libmgpu.a" -Wl,--no-whole-archive \
        >whole.log 2>&1
    code=$?
    sed 's/^/# /' whole.log | head -5
    tap $code "libmgpu.a, position-independent: it goes whole into a shared object"
else
    [ ! -e "$libdir/libmgpu.a" ]
    tap $? "no libmgpu.a installed by a build without it (--disable-static)"
fi

# -------------------------------------------------------------- pkg-config
flags=$($PKG_CONFIG --cflags --libs mgpu)
if [ -n "$soname" ]; then
    echo "# $CC t.c \$($PKG_CONFIG --cflags --libs mgpu)"
    echo "#   = $CC t.c $flags"
    if $CC -o pc-shared t.c $flags >build.log 2>&1; then
        run_consumer "pkg-config" ./pc-shared shared "$libdir"
    else
        sed 's/^/# /' build.log | head -20
        tap 1 "pkg-config: $CC t.c \$($PKG_CONFIG --cflags --libs mgpu) links"
    fi
else
    tap 0 "pkg-config, shared # SKIP no libmgpu.so (--disable-shared)"
fi
if [ -n "$archive" ]; then
    # With both libraries installed the linker takes libmgpu.so for -lmgpu;
    # GNU ld's -l:libmgpu.a names the static one.
    flags=
    for word in $($PKG_CONFIG --cflags --libs --static mgpu); do
        [ "$word" = -lmgpu ] && word=-l:libmgpu.a
        flags="$flags $word"
    done
    echo "# $CC t.c \$($PKG_CONFIG --cflags --libs --static mgpu), -l:libmgpu.a for -lmgpu"
    echo "#   = $CC t.c$flags"
    if $CC -o pc-static t.c $flags >build.log 2>&1; then
        run_consumer "pkg-config --static" ./pc-static static
    else
        sed 's/^/# /' build.log | head -20
        tap 1 "pkg-config --static: $CC t.c with --static's flags links"
    fi
else
    tap 0 "pkg-config --static # SKIP no libmgpu.a (--disable-static)"
fi

# ----------------------------------------------------------------- headers
# Each topic header stands alone: it includes the core <mgpu.h> itself.
topics=0 alone=0
for header in "$includedir"/mgpu/*.h; do
    [ -f "$header" ] || continue
    name=mgpu/${header##*/}
    topics=$((topics + 1))
    printf '#include <%s>\nint main(void) { return 0; }\n' "$name" >h.c
    if $CC -c -o h.o h.c $($PKG_CONFIG --cflags mgpu); then
        alone=$((alone + 1))
    else
        echo "# <$name> does not compile on its own"
    fi
done
[ "$topics" -gt 0 ] && [ "$alone" -eq "$topics" ]
tap $? "$alone of $topics topic headers under $includedir/mgpu compile alone"
private=
for header in mgpu-private.h mgpu-test.h measure.h trace.h; do
    if [ -e "$includedir/$header" ] || [ -e "$includedir/mgpu/$header" ]; then
        private="$private $header"
    fi
done
[ -z "$private" ]
tap $? "no private header installed${private:+ (installed:$private)}"

echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
