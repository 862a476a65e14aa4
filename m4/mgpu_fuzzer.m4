# mgpu_fuzzer.m4 - MGPU_CHECK_FUZZER: a compiler that links libFuzzer
# targets, for the fuzz test of mgpu-compare --from.  Sets have_fuzzer.
AC_DEFUN([MGPU_CHECK_FUZZER], [
# The fuzz test of mgpu-compare --from (tests/fuzz-from.c) needs a compiler
# that links -fsanitize=fuzzer: clang with its compiler-rt libraries.  It is
# built by FUZZ_CC, whatever CC is; without one the test skips.
AC_ARG_VAR([FUZZ_CC], [C compiler for the libFuzzer test (default: clang, if it links -fsanitize=fuzzer)])
FUZZ_CFLAGS="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1"
AC_SUBST([FUZZ_CFLAGS])
AC_CHECK_PROGS([FUZZ_CC], [clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14])
have_fuzzer=no
AS_IF([test -n "$FUZZ_CC"], [
  AC_MSG_CHECKING([whether $FUZZ_CC links a libFuzzer target])
  cat >conftest-fuzz.c <<'_EOF'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return data && size > 99; }
_EOF
  AS_IF([$FUZZ_CC $FUZZ_CFLAGS conftest-fuzz.c -o conftest-fuzz >&AS_MESSAGE_LOG_FD 2>&1 &&
         ./conftest-fuzz -runs=1 >&AS_MESSAGE_LOG_FD 2>&1],
        [have_fuzzer=yes])
  rm -f conftest-fuzz conftest-fuzz.c
  AC_MSG_RESULT([$have_fuzzer])
])
AM_CONDITIONAL([HAVE_FUZZER], [test "x$have_fuzzer" = xyes])
])
