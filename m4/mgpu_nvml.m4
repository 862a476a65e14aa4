# mgpu_nvml.m4 - MGPU_CHECK_NVML: whether mgpu can load NVML at run time.
#
# NVML (libnvidia-ml.so.1, part of the driver) tells mgpu-p2p how the GPUs
# are linked.  It is never linked: lib/nvml.c opens it with dlopen, so every
# binary still starts where there is no driver.  Building that needs only
# dlopen (in libc, or -ldl); nvml.h is not needed, since lib/nvml.c declares
# the few types it uses, and where the CUDA toolkit has nvml.h those
# declarations are checked against it at compile time.  Without dlopen, or
# with --without-nvml, mgpu-p2p falls back to its guess (native atomics
# means NVLink).  Sets nvml_summary for configure's summary.
AC_DEFUN([MGPU_CHECK_NVML], [
  AC_ARG_WITH([nvml],
    [AS_HELP_STRING([--without-nvml],
      [do not load NVML at run time for mgpu-p2p's links (default: load it
       where dlopen is available)])],
    [], [with_nvml=check])
  have_nvml=no
  nvml_summary="no: --without-nvml; mgpu-p2p guesses links from native atomics"
  AS_IF([test "x$with_nvml" != xno], [
    AC_CHECK_HEADER([dlfcn.h], [
      AC_SEARCH_LIBS([dlopen], [dl], [have_nvml=yes])
    ])
    AS_IF([test "x$have_nvml" = xyes], [
      AC_DEFINE([MGPU_HAVE_NVML], [1],
        [Define to 1 to load NVML (libnvidia-ml.so.1) at run time with dlopen.])
      mgpu_save_CPPFLAGS=$CPPFLAGS
      CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
      AC_CHECK_HEADER([nvml.h], [
        AC_DEFINE([MGPU_HAVE_NVML_H], [1],
          [Define to 1 to check lib/nvml.c's declarations against nvml.h.])
        nvml_header="declarations checked against nvml.h"
      ], [nvml_header="no nvml.h: declarations unchecked"])
      CPPFLAGS=$mgpu_save_CPPFLAGS
      nvml_summary="yes (libnvidia-ml.so.1 loaded at run time; $nvml_header)"
    ], [
      AS_IF([test "x$with_nvml" = xyes], [AC_MSG_ERROR([--with-nvml: no dlopen found])])
      nvml_summary="no: no dlopen; mgpu-p2p guesses links from native atomics"
    ])
  ])
  AM_CONDITIONAL([HAVE_NVML], [test "x$have_nvml" = xyes])
])
