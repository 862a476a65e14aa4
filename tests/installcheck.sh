#!/bin/sh
# installcheck.sh - `make installcheck': build a program against the installed
# mgpu with exactly the line the README documents,
#     $CC t.c $(pkg-config --cflags --libs --static mgpu)
# and run it; then compile each installed topic header, <mgpu/NAME.h>, alone,
# and check that no private header was installed.  Installs nothing; reads
# the tree `make install' made under $DESTDIR$prefix.
# Usage: installcheck.sh PROGRAM.c
# Environment: CC, PKG_CONFIG, pkgconfigdir (as configured), DESTDIR.
set -eu
src=$1
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
    PKG_CONFIG_PATH=$pkgconfigdir
fi
export PKG_CONFIG_PATH

# The mgpu that pkg-config finds must be the one just installed.
found=$($PKG_CONFIG --variable=pcfiledir mgpu)
if [ "$found" != "$PKG_CONFIG_PATH" ]; then
    echo "installcheck: $PKG_CONFIG found mgpu in $found, not in $PKG_CONFIG_PATH" >&2
    exit 1
fi
version=$($PKG_CONFIG --modversion mgpu)

includedir=$($PKG_CONFIG --variable=includedir mgpu)
cp "$src" "$tmp/t.c"
cd "$tmp"
echo "installcheck: $CC t.c \$($PKG_CONFIG --cflags --libs --static mgpu)"
echo "installcheck:   = $CC t.c $($PKG_CONFIG --cflags --libs --static mgpu)"
$CC t.c $($PKG_CONFIG --cflags --libs --static mgpu)
out=$(./a.out)
echo "installcheck: $out"
case $out in
"mgpu $version, host backend,"*) ;;
*)
    echo "installcheck: the program's mgpu.h is not version $version of mgpu.pc" >&2
    exit 1
    ;;
esac

# Each topic header stands alone: it includes the core <mgpu.h> itself.
topics=0
for header in "$includedir"/mgpu/*.h; do
    [ -f "$header" ] || continue
    name=mgpu/${header##*/}
    printf '#include <%s>\nint main(void) { return 0; }\n' "$name" >h.c
    if ! $CC -c -o h.o h.c $($PKG_CONFIG --cflags mgpu); then
        echo "installcheck: <$name> does not compile on its own" >&2
        exit 1
    fi
    topics=$((topics + 1))
done
if [ "$topics" -eq 0 ]; then
    echo "installcheck: no topic header in $includedir/mgpu" >&2
    exit 1
fi
echo "installcheck: $topics topic headers under $includedir/mgpu compile alone"
for private in mgpu-private.h mgpu-test.h measure.h trace.h; do
    if [ -e "$includedir/$private" ] || [ -e "$includedir/mgpu/$private" ]; then
        echo "installcheck: the private header $private is installed" >&2
        exit 1
    fi
done
