# mgpu_cflags.m4 - MGPU_CHECK_CFLAG(FLAG, VARIABLE): append FLAG to VARIABLE
# when $CC accepts it (with -Werror, so that a flag it only warns about is
# left out).
AC_DEFUN([MGPU_CHECK_CFLAG], [
  AC_MSG_CHECKING([whether $CC accepts $1])
  mgpu_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS $1 -Werror"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes]); $2="$$2 $1"], [AC_MSG_RESULT([no])])
  CFLAGS=$mgpu_save_CFLAGS
])
