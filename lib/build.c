/* build.c - what this build of mgpu is, for every record (doc/record.md,
 * "Provenance"): the revision of the sources it was made from, which make
 * asks of git at every build (tools/git-revision, revision.h: a commit
 * recompiles this file alone), and what configure built it with. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mgpu-private.h"
#include "revision.h"

const mgpu_build_field mgpu_build[] = {
    {"mgpu_revision", MGPU_REVISION},
    {"build_cuda", MGPU_BUILD_CUDA},
    {"build_cuda_archs", MGPU_BUILD_CUDA_ARCHS},
    {"build_nccl", MGPU_BUILD_NCCL},
    {"build_mpi", MGPU_BUILD_MPI},
    {"build_hwloc", MGPU_BUILD_HWLOC},
    {"build_jansson", MGPU_BUILD_JANSSON},
    {NULL, NULL},
};
