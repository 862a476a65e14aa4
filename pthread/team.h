/* team.h - what the files of mgpu-pthread share: the team of worker threads,
 * one per device, that pthread.c makes and both modes drive. */
#ifndef TEAM_H
#define TEAM_H

#include <pthread.h>
#include <stdbool.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/graph.h"

typedef struct team team;

typedef struct worker {
    team *team;
    int part;
    pthread_t thread;
    mgpu_status status; /* step mode: how its work since the last barrier went */
    long long barriers; /* step mode: barriers passed */
    double waited;      /* step mode: seconds at barriers in the timed runs */
    double run_waited;  /* step mode: seconds waiting in this run (barriers,
                           the device at the end) */
} worker;

/* The persistent workers' orders (persistent.c). */
enum command { CMD_RESET, CMD_ADVANCE, CMD_QUIT };

struct team {
    mgpu_stencil *st;
    mgpu_run *run;
    int n;
    pthread_mutex_t gate; /* held by the main thread while it creates workers */
    bool complete;        /* every worker was created */
    mgpu_failure failure;
    pthread_barrier_t barrier;       /* step mode: the workers */
    mgpu_graph_steps graph;          /* step mode: --graph's replays */
    pthread_barrier_t start, finish; /* persistent: the workers and the main thread */
    enum command command;            /* persistent: the order at "start", */
    long long step;                  /* its step, */
    long long commands;              /* and how many came before it */
    worker workers[MGPU_MAX_DEVICES];
};

/* Create one worker per part, each running FN (its worker as argument). */
mgpu_status team_start(team *t, void *(*fn)(void *arg));
/* A worker's first act: wait for the team to exist; false when it never
 * will.  Then team_enter: its CPUs and its device. */
bool team_complete(team *t);
mgpu_status team_enter(team *t, int p);
void team_join(team *t);
/* A failed pthread call. */
mgpu_status team_error(const char *call, int err);

/* Book 10.5 (persistent.c): --mode=persistent, the field left in RUN's
 * field; with CPU_CONTROL the CPU control field too. */
mgpu_status persistent_mode(team *t, bool cpu_control);

#endif /* TEAM_H */
