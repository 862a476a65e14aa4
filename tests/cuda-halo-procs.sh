#!/bin/sh
# cuda-halo-procs.sh - deep halos and time blocks on GPUs, the strategies of
# one process per device: mgpu-fork (staged, and ipc where the devices have
# peer access) and mgpu-mpi (a rank per device; staged, and mpi when the
# MPI is CUDA-aware), with the matrix of tests/halo-gpu.sh.  Skips (exit
# 77) when there is no usable GPU.
. "$top_srcdir/tests/lib.sh"
programs="fork/mgpu-fork mpi/mgpu-mpi"
. "$top_srcdir/tests/halo-gpu.sh"
