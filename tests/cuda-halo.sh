#!/bin/sh
# cuda-halo.sh - deep halos and time blocks on GPUs, the in-process
# strategies: mgpu-single, -pthread and -openmp (with --graph too) and
# mgpu-streams, in every exchange mode each takes (tests/halo-gpu.sh has
# the matrix; cuda-halo-procs.sh runs it for the processes).  Skips (exit
# 77) when there is no usable GPU.
. "$top_srcdir/tests/lib.sh"
programs="single_thread/mgpu-single pthread/mgpu-pthread openmp/mgpu-openmp streams/mgpu-streams"
. "$top_srcdir/tests/halo-gpu.sh"
