# mgpu_hwloc.m4 - MGPU_CHECK_HWLOC: hwloc, with which --bind=auto finds the
# CPUs nearest each GPU (lib/bind.c).  Optional: without it (--without-hwloc,
# or none found) the binding reads the sysfs file hwloc would read, and the
# summary says so; --with-hwloc makes a missing one an error.
AC_DEFUN([MGPU_CHECK_HWLOC], [
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
AC_ARG_WITH([hwloc],
  [AS_HELP_STRING([--with-hwloc],
    [place each worker near its GPU with hwloc (default: when found)])],
  [], [with_hwloc=check])
have_hwloc=no
hwloc_why="not found (libhwloc-dev, tools/install-deps)"
AS_IF([test "x$with_hwloc" = xno], [hwloc_why="--without-hwloc"], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [
    mgpu_save_CPPFLAGS=$CPPFLAGS
    mgpu_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $HWLOC_CFLAGS"
    LIBS="$HWLOC_LIBS $LIBS"
    AC_MSG_CHECKING([whether a program links with hwloc])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hwloc.h>]],
                                    [[hwloc_topology_t t; return hwloc_topology_init(&t);]])],
      [AC_MSG_RESULT([yes]); have_hwloc=yes],
      [AC_MSG_RESULT([no]); hwloc_why="found, but a program does not link with it"])
    CPPFLAGS=$mgpu_save_CPPFLAGS
    LIBS=$mgpu_save_LIBS
  ], [:])
  AS_IF([test "x$have_hwloc" = xno && test "x$with_hwloc" = xyes],
        [AC_MSG_ERROR([--with-hwloc: hwloc 2 $hwloc_why])])
])
hwloc_version=`$PKG_CONFIG --modversion hwloc 2>/dev/null`
# Only a GPU has a place in the machine to be near: a build without CUDA
# shares the CPUs out among host workers and links no hwloc.
AS_IF([test "x$have_hwloc" = xyes && test "x$have_cuda" != xyes], [
  HWLOC_CFLAGS=
  HWLOC_LIBS=
  hwloc_summary="yes${hwloc_version:+ ($hwloc_version)}, unused: no CUDA, host workers get shares of the CPUs"
], [test "x$have_hwloc" = xyes], [
  AC_DEFINE([MGPU_HAVE_HWLOC], [1], [Define to 1 to place workers near their GPUs with hwloc.])
  # In LIBS, so that mgpu.pc's Libs carry it for the installed static library.
  LIBS="$HWLOC_LIBS $LIBS"
  hwloc_summary="yes${hwloc_version:+ ($hwloc_version)}, for --bind=auto near each GPU"
], [
  HWLOC_CFLAGS=
  HWLOC_LIBS=
  AS_IF([test "x$have_cuda" = xyes],
        [hwloc_summary="no: $hwloc_why; --bind=auto reads sysfs instead"],
        [hwloc_summary="no: $hwloc_why; unused without CUDA"])
])
AC_SUBST([HWLOC_CFLAGS])
AC_SUBST([HWLOC_LIBS])
])
