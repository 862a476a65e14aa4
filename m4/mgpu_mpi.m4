# mgpu_mpi.m4 - MGPU_CHECK_MPI: an MPI for mgpu-mpi, found through its C
# compiler wrapper.  Optional: without one mgpu-mpi is not built; --with-mpi
# makes a missing one an error.  Sets have_mpi, MPICC, MPIRUN and
# mpi_version.
AC_DEFUN([MGPU_CHECK_MPI], [
AC_ARG_WITH([mpi],
  [AS_HELP_STRING([--with-mpi], [build mgpu-mpi with an MPI C compiler (default: when found)])],
  [], [with_mpi=check])
AC_ARG_VAR([MPICC], [MPI C compiler wrapper])
have_mpi=no
mpi_version=
AS_IF([test "x$with_mpi" != xno], [
  AC_PATH_PROGS([MPICC], [mpicc])
  AS_IF([test -n "$MPICC"], [have_mpi=yes],
        [AS_IF([test "x$with_mpi" = xyes], [AC_MSG_ERROR([--with-mpi: no mpicc found])])])
  AC_PATH_PROGS([MPIRUN], [mpirun mpiexec])
])
# mgpu-mpi is compiled by $CC like every program, with the flags
# the wrapper would add: Open MPI tells them with --showme:compile and
# --showme:link, MPICH with -show-compile-info and -show-link-info.
# MPI_CFLAGS and MPI_LIBS given by hand win.  A test link proves them.
AC_ARG_VAR([MPI_CFLAGS], [C compiler flags for MPI (default: asked of MPICC)])
AC_ARG_VAR([MPI_LIBS], [linker flags and libraries for MPI (default: asked of MPICC)])
AS_IF([test "x$have_mpi" = xyes], [
  AS_IF([test -z "$MPI_CFLAGS$MPI_LIBS"], [
    AS_IF([MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null` &&
           MPI_LIBS=`$MPICC --showme:link 2>/dev/null`], [],
          [MPI_CFLAGS=`$MPICC -show-compile-info 2>/dev/null`
           MPI_LIBS=`$MPICC -show-link-info 2>/dev/null`])
  ])
  AC_MSG_CHECKING([whether $CC links an MPI program with MPI_CFLAGS and MPI_LIBS])
  mgpu_save_CFLAGS=$CFLAGS
  mgpu_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $MPI_CFLAGS"
  LIBS="$MPI_LIBS $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[return MPI_Init(0, 0);]])],
    [AC_MSG_RESULT([yes])
     AC_CHECK_HEADERS([mpi-ext.h], [], [], [[#include <mpi.h>]])
     MGPU_MPI_VERSION],
    [AC_MSG_RESULT([no])
     have_mpi=no
     AS_IF([test "x$with_mpi" = xyes],
           [AC_MSG_ERROR([--with-mpi: $CC cannot link an MPI program with them])])])
  CFLAGS=$mgpu_save_CFLAGS
  LIBS=$mgpu_save_LIBS
])
AM_CONDITIONAL([HAVE_MPI], [test "x$have_mpi" = xyes])
])

# MGPU_MPI_VERSION: which MPI mpi.h is, for the summary and the record
# (build_mpi): "Open MPI 4.1.4", "MPICH 4.0.2", else the standard it
# implements, "MPI 3.1".  Run where mpi.h compiles (MPI_CFLAGS in CFLAGS).
AC_DEFUN([MGPU_MPI_VERSION], [
AC_COMPUTE_INT([mpi_major], [OMPI_MAJOR_VERSION], [[#include <mpi.h>]], [mpi_major=])
AS_IF([test -n "$mpi_major"], [
  AC_COMPUTE_INT([mpi_minor], [OMPI_MINOR_VERSION], [[#include <mpi.h>]], [mpi_minor=0])
  AC_COMPUTE_INT([mpi_release], [OMPI_RELEASE_VERSION], [[#include <mpi.h>]], [mpi_release=0])
  mpi_version="Open MPI $mpi_major.$mpi_minor.$mpi_release"
], [
  # MPICH_NUMVERSION: 10000000 major + 100000 minor + 1000 revision + the release kind.
  AC_COMPUTE_INT([mpi_code], [MPICH_NUMVERSION], [[#include <mpi.h>]], [mpi_code=])
  AS_IF([test -n "$mpi_code"], [
    mpi_version="MPICH `expr $mpi_code / 10000000`.`expr $mpi_code / 100000 % 100`.`expr $mpi_code / 1000 % 100`"
  ], [
    AC_COMPUTE_INT([mpi_major], [MPI_VERSION], [[#include <mpi.h>]], [mpi_major=])
    AC_COMPUTE_INT([mpi_minor], [MPI_SUBVERSION], [[#include <mpi.h>]], [mpi_minor=])
    AS_IF([test -n "$mpi_major"], [mpi_version="MPI $mpi_major.$mpi_minor"])
  ])
])
])
