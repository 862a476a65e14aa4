# mgpu_nccl.m4 - MGPU_CHECK_NCCL: NCCL, for the exchange mode nccl (halos
# by ncclSend/ncclRecv, lib/nccl.c).  Optional: without it (--without-nccl,
# no CUDA, or none found) the mode is left out of every --help and asking for
# it is a usage error; --with-nccl makes a missing one an error.
#
# Where it is looked for: --with-nccl=DIR's include and lib64, lib or
# lib/MULTIARCH; else the CUDA toolkit's folders (the toolkit's own NCCL),
# then /usr/include with the multiarch library folder (/usr/lib/x86_64-
# linux-gnu), where NVIDIA's Debian packages put it, /usr/lib64 and
# /usr/lib.  The first folder pair holding nccl.h and libnccl is proved by a
# test link.  libnccl.so is linked (it needs no libcuda, so every binary
# still starts where there is no driver); a library folder outside the
# system's is also put in the binaries' run path.  NCCL 2.18 or later
# (ncclConfig_t, ncclCommGetAsyncError, ncclGetLastError).  Sets have_nccl,
# NCCL_CPPFLAGS, NCCL_LIBS (also added to LIBS, so that mgpu.pc carries it)
# and nccl_summary.
AC_DEFUN([MGPU_CHECK_NCCL], [
AC_REQUIRE([AC_PROG_CC])
AC_ARG_WITH([nccl],
  [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@],
    [exchange halos by NCCL with the NCCL in DIR (default: look in the CUDA
     toolkit, then /usr/include and the multiarch library folder)])],
  [], [with_nccl=check])
have_nccl=no
NCCL_CPPFLAGS=
NCCL_LIBS=
nccl_why=
nccl_multiarch=`$CC -print-multiarch 2>/dev/null`
AS_IF([test "x$with_nccl" = xno], [nccl_why="--without-nccl"],
      [test "x$have_cuda" != xyes], [nccl_why="no CUDA backend"], [
  # Candidate "include-folder library-folder" pairs, in order.
  AS_IF([test "x$with_nccl" != xyes && test "x$with_nccl" != xcheck], [
    nccl_candidates="$with_nccl/include:$with_nccl/lib64 $with_nccl/include:$with_nccl/lib"
    AS_IF([test -n "$nccl_multiarch"],
          [nccl_candidates="$nccl_candidates $with_nccl/include:$with_nccl/lib/$nccl_multiarch"])
  ], [
    nccl_candidates="$cuda_dir/include:$cuda_dir/lib64 $cuda_dir/include:$cuda_dir/lib"
    AS_IF([test -n "$nccl_multiarch"],
          [nccl_candidates="$nccl_candidates /usr/include:/usr/lib/$nccl_multiarch"])
    nccl_candidates="$nccl_candidates /usr/include:/usr/lib64 /usr/include:/usr/lib"
  ])
  AC_MSG_CHECKING([for nccl.h and libnccl])
  nccl_incdir=
  nccl_libdir=
  for nccl_pair in $nccl_candidates; do
    nccl_inc=`echo "$nccl_pair" | sed 's/:.*//'`
    nccl_lib=`echo "$nccl_pair" | sed 's/^@<:@^:@:>@*://'`
    AS_IF([test -f "$nccl_inc/nccl.h" && ls "$nccl_lib"/libnccl.so* >/dev/null 2>&1],
          [nccl_incdir=$nccl_inc; nccl_libdir=$nccl_lib; break])
  done
  AS_IF([test -n "$nccl_incdir"], [AC_MSG_RESULT([$nccl_incdir, $nccl_libdir])],
        [AC_MSG_RESULT([no])
         nccl_why="no nccl.h with libnccl.so in: $nccl_candidates"])
  AS_IF([test -n "$nccl_incdir"], [
    # The system's own folders are searched already, by the compiler and at
    # run time; any other goes into the run path too.
    nccl_rpath=" -Wl,-rpath,$nccl_libdir"
    AS_CASE([$nccl_libdir],
      [/usr/lib | /usr/lib64 | /lib | /lib64 | /usr/lib/$nccl_multiarch | /lib/$nccl_multiarch],
      [nccl_rpath=])
    AS_CASE([$nccl_incdir], [/usr/include], [NCCL_CPPFLAGS=], [NCCL_CPPFLAGS="-I$nccl_incdir"])
    NCCL_LIBS="-L$nccl_libdir$nccl_rpath -lnccl"
    mgpu_save_CPPFLAGS=$CPPFLAGS
    mgpu_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS $NCCL_CPPFLAGS"
    LIBS="$NCCL_LIBS $CUDA_LDFLAGS $CUDA_LIBS $LIBS"
    AC_MSG_CHECKING([whether a program links with NCCL 2.18 or later])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error NCCL 2.18 or later is needed
#endif]], [[ncclUniqueId id;
ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
ncclComm_t comm = 0;
ncclResult_t state;
(void) config;
(void) ncclCommGetAsyncError(comm, &state);
(void) ncclGetLastError(comm);
return (int) ncclGetUniqueId(&id);]])],
      [AC_MSG_RESULT([yes]); have_nccl=yes],
      [AC_MSG_RESULT([no])
       nccl_why="$nccl_incdir/nccl.h with $nccl_libdir/libnccl: not 2.18 or later, or a program does not link with it"])
    AS_IF([test "x$have_nccl" = xyes], [
      AC_COMPUTE_INT([nccl_major], [NCCL_MAJOR], [[#include <nccl.h>]], [nccl_major=])
      AC_COMPUTE_INT([nccl_minor], [NCCL_MINOR], [[#include <nccl.h>]], [nccl_minor=])
      AC_COMPUTE_INT([nccl_patch], [NCCL_PATCH], [[#include <nccl.h>]], [nccl_patch=])
    ])
    CPPFLAGS=$mgpu_save_CPPFLAGS
    LIBS=$mgpu_save_LIBS
  ])
])
AS_IF([test "x$have_nccl" = xyes], [
  AC_DEFINE([MGPU_HAVE_NCCL], [1], [Define to 1 to build the exchange mode nccl.])
  # In LIBS, so that mgpu.pc's Libs carry it for the installed static library.
  LIBS="$NCCL_LIBS $LIBS"
  nccl_summary="yes (${nccl_major:+$nccl_major.$nccl_minor.$nccl_patch, }$nccl_incdir, $nccl_libdir), --exchange=nccl"
], [
  NCCL_CPPFLAGS=
  NCCL_LIBS=
  AS_IF([test "x$with_nccl" != xno && test "x$with_nccl" != xcheck],
        [AC_MSG_ERROR([--with-nccl: $nccl_why])])
  nccl_summary="no: $nccl_why; no --exchange=nccl"
])
AM_CONDITIONAL([HAVE_NCCL], [test "x$have_nccl" = xyes])
AC_SUBST([NCCL_CPPFLAGS])
AC_SUBST([NCCL_LIBS])
])
