#!/bin/sh
# installcheck.sh - `make installcheck': the installed mgpu taken as its
# users take it.  A program of theirs (PROGRAM.c) is built four ways and run:
#   pkg-config, shared:  cc t.c $(pkg-config --cflags --libs mgpu)  (the README's line)
#   pkg-config, static:  the same with --static, and -l:libmgpu.a for -lmgpu
#   CMake, shared:       find_package(mgpu VERSION) and mgpu::mgpu
#   CMake, static:       the same with mgpu_USE_STATIC_LIBS=ON
# Each program's dynamic section must name libmgpu.so's soname, or no
# libmgpu at all, and its run must step two host devices bit for bit like
# the C reference.  Then: libmgpu.so has its versioned soname, libmgpu.a
# goes whole into a shared object (it is position-independent), each
# installed <mgpu/NAME.h> compiles alone, and no private header is
# installed.  A library the build did not make (--disable-shared or
# --disable-static, as LIBMGPU.LA says) must not be installed, and the
# cases that need it skip, as the CMake cases do without cmake.  Installs
# nothing; reads the tree `make install' made under $DESTDIR$prefix.
# Prints a TAP line a case (tests/lib.sh's tap; .ci/run counts them) and
# exits 1 if one failed.
# Usage: installcheck.sh PROGRAM.c LIBMGPU.LA
# Environment: CC, PKG_CONFIG, pkgconfigdir and cmakeconfigdir (as
# configured), DESTDIR, CMAKE (default: cmake).
set -u
src=$1 la=$2
. "$(dirname "$0")/lib.sh" # tap, needed
: "${CC:=cc}"
: "${PKG_CONFIG:=pkg-config}"
: "${CMAKE:=cmake}"
: "${pkgconfigdir:?pkgconfigdir is not set}"
: "${cmakeconfigdir:?cmakeconfigdir is not set}"
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
# not look for libmgpu.so on its own (a program CMake built knows it from
# its run path), is put on LD_LIBRARY_PATH.
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

# ------------------------------------------------------------------- CMake
config=$DESTDIR$cmakeconfigdir/mgpuConfig.cmake
if ! command -v "$CMAKE" >/dev/null 2>&1; then
    tap 0 "CMake, shared and static # SKIP no $CMAKE (tools/install-deps installs cmake)"
elif [ ! -f "$config" ]; then
    tap 1 "CMake: $config is installed"
elif [ -n "$DESTDIR" ] && ! grep -q '"${_mgpu_prefix}/' "$config"; then
    tap 0 "CMake, shared and static # SKIP mgpuConfig.cmake names libdir and includedir in full \
(not both under the prefix), and they are only under DESTDIR"
else
    mkdir project
    cp t.c project/
    # find_package turns away a version newer than the install, then takes
    # the install's own.
    cat >project/CMakeLists.txt <<END
cmake_minimum_required(VERSION 3.13)
project(mgpu_consumer C)
find_package(mgpu 999.0 QUIET)
if(mgpu_FOUND)
  message(FATAL_ERROR "find_package(mgpu 999.0) took version \${mgpu_VERSION}")
endif()
find_package(mgpu $version REQUIRED)
add_executable(t t.c)
target_link_libraries(t PRIVATE mgpu::mgpu)
END
    for kind in shared static; do
        if [ $kind = shared ] && [ -z "$soname" ]; then
            tap 0 "CMake, shared # SKIP no libmgpu.so (--disable-shared)"
            continue
        elif [ $kind = static ] && [ -z "$archive" ]; then
            tap 0 "CMake, static # SKIP no libmgpu.a (--disable-static)"
            continue
        fi
        use_static=$([ $kind = static ] && echo ON || echo OFF)
        echo "# $CMAKE -S project -B $kind -DCMAKE_PREFIX_PATH=$prefix -Dmgpu_USE_STATIC_LIBS=$use_static"
        if CC=$CC "$CMAKE" -S project -B $kind -DCMAKE_PREFIX_PATH="$prefix" \
            -Dmgpu_USE_STATIC_LIBS=$use_static >cmake.log 2>&1 &&
            "$CMAKE" --build $kind >>cmake.log 2>&1; then
            dir=$(sed -n 's/^mgpu_DIR:PATH=//p' $kind/CMakeCache.txt)
            if [ "$dir" = "$DESTDIR$cmakeconfigdir" ]; then
                run_consumer "CMake, mgpu::mgpu" ./$kind/t $kind
            else
                tap 1 "CMake, $kind: find_package(mgpu) took $dir, not $DESTDIR$cmakeconfigdir"
            fi
        else
            sed 's/^/# /' cmake.log | tail -20
            tap 1 "CMake, $kind: find_package(mgpu $version) and mgpu::mgpu build t.c"
        fi
    done
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
