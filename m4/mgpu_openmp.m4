# mgpu_openmp.m4 - the OpenMP runtime library that code compiled with
# $OPENMP_CFLAGS needs at link time, for mgpu.pc's Libs.private: a program
# that links the static libmgpu.a needs the runtime (libgomp with GCC,
# libomp with clang), not the compiler flag, which would also turn OpenMP on
# in the program's own code.
#
# MGPU_OPENMP_RUNTIME: after AC_OPENMP.  Compiles a parallel loop with
# $OPENMP_CFLAGS, then links it without the flag against -lgomp, -lomp and
# -liomp5 in turn; the first that links is MGPU_OPENMP_LIBS.  None: the flag
# itself, as before (it still links, and says so in configure's output).
AC_DEFUN([MGPU_OPENMP_RUNTIME], [
MGPU_OPENMP_LIBS=
AS_IF([test -n "$OPENMP_CFLAGS"], [
  AC_MSG_CHECKING([for the OpenMP runtime that $OPENMP_CFLAGS code links])
  mgpu_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS $OPENMP_CFLAGS"
  mgpu_omp_object=
  AC_COMPILE_IFELSE([AC_LANG_SOURCE([[
#include <omp.h>
int mgpu_omp_sum(int n)
{
    int s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < n; i++)
        s += i + omp_get_thread_num();
    return s;
}]])], [cp conftest.$ac_objext mgpu-omp.$ac_objext && mgpu_omp_object=mgpu-omp.$ac_objext])
  CFLAGS=$mgpu_save_CFLAGS
  AS_IF([test -n "$mgpu_omp_object"], [
    for mgpu_omp_lib in -lgomp -lomp -liomp5; do
      mgpu_save_LIBS=$LIBS
      LIBS="$mgpu_omp_object $mgpu_omp_lib $LIBS"
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[int mgpu_omp_sum(int);]],
                                      [[return mgpu_omp_sum(3) < 0;]])],
                     [MGPU_OPENMP_LIBS=$mgpu_omp_lib])
      LIBS=$mgpu_save_LIBS
      test -n "$MGPU_OPENMP_LIBS" && break
    done
    rm -f "$mgpu_omp_object"])
  AS_IF([test -n "$MGPU_OPENMP_LIBS"], [AC_MSG_RESULT([$MGPU_OPENMP_LIBS])],
        [MGPU_OPENMP_LIBS=$OPENMP_CFLAGS
         AC_MSG_RESULT([none found: mgpu.pc gives $OPENMP_CFLAGS])])])
AC_SUBST([MGPU_OPENMP_LIBS])
])
