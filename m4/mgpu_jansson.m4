# mgpu_jansson.m4 - MGPU_CHECK_JANSSON: jansson, the JSON library.
# Optional: mgpu-compare (which reads records and results.json back) and
# mgpu-p2p are built only with it; the library and every strategy program
# are built without it, and print their JSON record with the library's own
# writer (doc/design.md section 4 says why there is one writer a build).
# --with-jansson makes a missing one an error.  2.11 or later
# (json_error_code).  Sets have_jansson, JANSSON_CFLAGS, JANSSON_LIBS (also
# added to LIBS, so that mgpu.pc's Libs carry it for the installed static
# library), jansson_version and jansson_summary.
AC_DEFUN([MGPU_CHECK_JANSSON], [
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
AC_ARG_WITH([jansson],
  [AS_HELP_STRING([--without-jansson],
    [build without jansson: no mgpu-compare or mgpu-p2p, and the record's
     JSON written by the library itself (default: use jansson when found)])],
  [], [with_jansson=check])
have_jansson=no
jansson_version=
jansson_why="not found (libjansson-dev, tools/install-deps)"
AS_IF([test "x$with_jansson" = xno], [jansson_why="--without-jansson"], [
  PKG_CHECK_MODULES([JANSSON], [jansson >= 2.11], [
    mgpu_save_CPPFLAGS=$CPPFLAGS
    mgpu_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $JANSSON_CFLAGS"
    LIBS="$JANSSON_LIBS $LIBS"
    AC_MSG_CHECKING([whether a program links with jansson])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <jansson.h>]],
                                    [[json_error_t e; json_t *v = json_loads("1", 0, &e);
return v ? (int) json_error_code(&e) : 1;]])],
      [AC_MSG_RESULT([yes]); have_jansson=yes],
      [AC_MSG_RESULT([no]); jansson_why="found, but a program does not link with it"])
    CPPFLAGS=$mgpu_save_CPPFLAGS
    LIBS=$mgpu_save_LIBS
  ], [jansson_why="jansson 2.11 or later not found (libjansson-dev, tools/install-deps)"])
  AS_IF([test "x$have_jansson" = xno && test "x$with_jansson" = xyes],
        [AC_MSG_ERROR([--with-jansson: $jansson_why; set JANSSON_CFLAGS and JANSSON_LIBS to name one])])
])
AS_IF([test "x$have_jansson" = xyes], [
  AC_DEFINE([MGPU_HAVE_JANSSON], [1],
    [Define to 1 to write and read JSON with jansson, and build mgpu-compare and mgpu-p2p.])
  jansson_version=`$PKG_CONFIG --modversion jansson 2>/dev/null`
  LIBS="$JANSSON_LIBS $LIBS"
  jansson_summary="yes${jansson_version:+ ($jansson_version)}, for every JSON mgpu writes, mgpu-compare and mgpu-p2p"
], [
  JANSSON_CFLAGS=
  JANSSON_LIBS=
  jansson_summary="no: $jansson_why; mgpu-compare and mgpu-p2p are not built, the record's JSON is the library's own"
])
AM_CONDITIONAL([HAVE_JANSSON], [test "x$have_jansson" = xyes])
AC_SUBST([JANSSON_CFLAGS])
AC_SUBST([JANSSON_LIBS])
])
