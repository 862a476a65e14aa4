# mgpu_nvtx.m4 - MGPU_CHECK_NVTX: the NVTX 3 ranges that name each step,
# exchange, compute and graph replay on an Nsight Systems timeline.
#
# NVTX 3 is header-only (nvtx3/nvToolsExt.h, shipped with the CUDA toolkit):
# nothing to link but dlopen, with which it loads the profiler's library
# when one is attached.  Optional: without the header the ranges compile to
# nothing, and the summary says so (mgpu_nvtx_summary).  --without-nvtx
# leaves them out; --with-nvtx makes a missing header an error.
AC_DEFUN([MGPU_CHECK_NVTX], [
  AC_ARG_WITH([nvtx],
    [AS_HELP_STRING([--without-nvtx],
      [leave out the NVTX ranges for Nsight Systems (default: with them where
       nvtx3/nvToolsExt.h is found, in the CUDA toolkit's include directory)])],
    [], [with_nvtx=check])
  have_nvtx=no
  mgpu_nvtx_summary="no: --without-nvtx"
  AS_IF([test "x$with_nvtx" != xno], [
    mgpu_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
    AC_CHECK_HEADER([nvtx3/nvToolsExt.h],
      [AC_SEARCH_LIBS([dlopen], [dl], [have_nvtx=yes])])
    CPPFLAGS=$mgpu_save_CPPFLAGS
    AS_IF([test "x$have_nvtx" = xyes],
      [AC_DEFINE([MGPU_HAVE_NVTX], [1],
         [Define to 1 to mark steps, exchanges and computes with NVTX ranges.])
       mgpu_nvtx_summary="yes (nvtx3/nvToolsExt.h; domain mgpu)"],
      [AS_IF([test "x$with_nvtx" = xyes],
         [AC_MSG_ERROR([--with-nvtx: no usable nvtx3/nvToolsExt.h (it comes with the CUDA toolkit)])])
       mgpu_nvtx_summary="no: no nvtx3/nvToolsExt.h (it comes with the CUDA toolkit)"])
  ])
  AM_CONDITIONAL([HAVE_NVTX], [test "x$have_nvtx" = xyes])
])
