# mgpu_cuda.m4 - MGPU_CHECK_CUDA: the CUDA toolkit and the architectures to
# build for.  Optional: without nvcc (or --without-cuda) only the host
# backend is built; --with-cuda makes a missing toolkit an error.  Sets
# have_cuda, cuda_dir, cuda_version (12.8), cuda_archs and cuda_arch_native
# for the summary.
AC_DEFUN([MGPU_CHECK_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
    [build the CUDA backend with the toolkit in DIR (default: look for nvcc)])],
  [], [with_cuda=check])
AC_ARG_WITH([cuda-arch],
  [AS_HELP_STRING([--with-cuda-arch=LIST],
    [GPU architectures to build for, comma separated; native: those of this
     machine's GPUs, as nvcc -arch=native finds them
     (default: sm_75,sm_80,sm_90)])],
  [], [with_cuda_arch=sm_75,sm_80,sm_90])
# Not sm_86 and sm_89 by default: a GPU runs the code built for an earlier
# architecture of its major version, so theirs is sm_80's, and each
# architecture more costs every .cu file another compile (persistent/deep-
# cuda.cu's sixteen kernels take a minute each on a core).
AC_ARG_VAR([NVCC], [CUDA compiler])
AC_ARG_VAR([NVCCFLAGS], [flags for the CUDA compiler])

have_cuda=no
cuda_dir=
cuda_version=
AS_IF([test "x$with_cuda" != xno], [
  AS_IF([test "x$with_cuda" != xyes && test "x$with_cuda" != xcheck],
        [cuda_dir=$with_cuda])
  AS_IF([test -z "$NVCC"], [
    AS_IF([test -n "$cuda_dir"],
          [AC_PATH_PROG([NVCC], [nvcc], [], [$cuda_dir/bin])],
          [AC_PATH_PROG([NVCC], [nvcc], [], [$PATH:/usr/local/cuda/bin])])
  ])
  AS_IF([test -n "$NVCC"], [
    AS_IF([test -z "$cuda_dir"],
          [cuda_dir=`AS_DIRNAME(["$NVCC"])`; cuda_dir=`AS_DIRNAME(["$cuda_dir"])`])
    CUDA_CPPFLAGS="-I$cuda_dir/include"
    cuda_libdir=$cuda_dir/lib64
    AS_IF([test -d "$cuda_libdir"], [], [cuda_libdir=$cuda_dir/lib])
    CUDA_LDFLAGS="-L$cuda_libdir"
    mgpu_save_CPPFLAGS=$CPPFLAGS
    mgpu_save_LDFLAGS=$LDFLAGS
    mgpu_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
    LDFLAGS="$LDFLAGS $CUDA_LDFLAGS"
    # The static runtime: binaries start on machines without libcudart.so,
    # and nothing links libcuda (the driver is found at run time).
    LIBS="-lcudart_static -ldl -lrt -lpthread -lstdc++ $LIBS"
    AC_CHECK_HEADER([cuda_runtime_api.h], [
      AC_MSG_CHECKING([for cudaGetDeviceCount in libcudart_static])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>]],
                                      [[int n; return (int) cudaGetDeviceCount(&n);]])],
                     [AC_MSG_RESULT([yes]); have_cuda=yes], [AC_MSG_RESULT([no])])
    ])
    # The toolkit's version, for the summary and the record (build_cuda):
    # CUDART_VERSION is 1000 major + 10 minor.
    AS_IF([test "x$have_cuda" = xyes], [
      AC_COMPUTE_INT([cuda_runtime_code], [CUDART_VERSION], [[#include <cuda_runtime_api.h>]],
                     [cuda_runtime_code=])
      AS_IF([test -n "$cuda_runtime_code"],
            [cuda_version="`expr $cuda_runtime_code / 1000`.`expr $cuda_runtime_code % 1000 / 10`"])
    ])
    CPPFLAGS=$mgpu_save_CPPFLAGS
    LDFLAGS=$mgpu_save_LDFLAGS
    LIBS=$mgpu_save_LIBS
  ])
  AS_IF([test "x$have_cuda" = xno && test "x$with_cuda" != xcheck],
        [AC_MSG_ERROR([--with-cuda was given but no usable CUDA toolkit was found])])
])

cuda_archs=
cuda_arch_native=
NVCC_ARCHFLAGS=
AS_IF([test "x$have_cuda" = xyes], [
  AC_DEFINE([MGPU_HAVE_CUDA], [1], [Define to 1 to build the CUDA backend.])
  CUDA_LIBS="-lcudart_static -ldl -lrt -lpthread -lstdc++"
  # native: the architectures nvcc -arch=native picks here, written out, so
  # that the build is the same whoever runs make, and the summary says what
  # they are.  Where nvcc finds no GPU it would quietly build for its
  # default architecture; configure fails instead, in one line.
  AS_CASE([",$with_cuda_arch,"], [*,native,*], [
    AC_MSG_CHECKING([what $NVCC -arch=native builds for])
    AS_IF([native_archs=`$SHELL "$srcdir/tools/cuda-arch-native" "$NVCC" 2>conftest.err`], [
      AC_MSG_RESULT([$native_archs])
      rm -f conftest.err
      cuda_arch_native=" (native = $native_archs, found by nvcc -arch=native)"
      native_archs=`echo "$native_archs" | tr ' ' ','`
      with_cuda_arch=`echo ",$with_cuda_arch," | sed "s/,native,/,$native_archs,/; s/^,//; s/,\$//"`
    ], [
      AC_MSG_RESULT([none])
      native_why=`cat conftest.err`
      rm -f conftest.err
      AC_MSG_ERROR([--with-cuda-arch=native: $native_why; name the architectures instead, e.g. --with-cuda-arch=sm_90])
    ])
  ])
  # sm_90 -> -gencode=arch=compute_90,code=sm_90; the newest also as PTX,
  # so that newer GPUs can run it.
  last=
  for arch in `echo "$with_cuda_arch" | tr ',' '\n' | awk '!seen@<:@$[]0@:>@++'`; do
    num=`echo "$arch" | sed 's/^sm_//; s/^compute_//'`
    AS_CASE([$num], [[[0-9]]*], [], [AC_MSG_ERROR([bad --with-cuda-arch entry: $arch])])
    NVCC_ARCHFLAGS="$NVCC_ARCHFLAGS -gencode=arch=compute_$num,code=sm_$num"
    cuda_archs="$cuda_archs sm_$num"
    last=$num
  done
  AS_IF([test -n "$last"],
        [NVCC_ARCHFLAGS="$NVCC_ARCHFLAGS -gencode=arch=compute_$last,code=compute_$last"])
])
AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
AC_SUBST([CUDA_CPPFLAGS])
AC_SUBST([CUDA_LDFLAGS])
AC_SUBST([CUDA_LIBS])
AC_SUBST([NVCC_ARCHFLAGS])
AS_IF([test -z "$NVCCFLAGS"], [NVCCFLAGS="-O3"])
])
