/* The guest side of the study's protocol, shared by the workloads and tools.
 *
 * Everything the host reads is one console line: "@@reclaim " + a JSON object.
 * A phase mark closes the previous phase: on gem5 it dumps and resets the stats
 * (so each phase is one stats.txt block) and it prints a /proc/vmstat snapshot. */
#ifndef RECLAIM_GUEST_H
#define RECLAIM_GUEST_H

#include <stddef.h>

#define GUEST_MARKER "@@reclaim "

enum guest_backend { BACKEND_NATIVE, BACKEND_QEMU, BACKEND_GEM5 };

/* From $RECLAIM_BACKEND, else "reclaim.backend=" on /proc/cmdline, else native. */
enum guest_backend guest_backend(void);
const char *guest_backend_name(enum guest_backend backend);

/* Seconds on CLOCK_MONOTONIC. */
double guest_now(void);

/* One /proc/vmstat counter, or -1 when absent. */
long long guest_vmstat(const char *name);

/* Start phase `name` (and end the previous one). */
void guest_phase(const char *name);
/* End the last phase: the final stats block on gem5, a last vmstat snapshot. */
void guest_phases_done(void);

/* A record: guest_record_begin(), fields, guest_record_end() prints it whole. */
struct guest_record {
	char buf[4096];
	size_t len;
	int overflow;
};
void guest_record_begin(struct guest_record *r, const char *workload, const char *kind);
void guest_record_int(struct guest_record *r, const char *key, long long value);
void guest_record_num(struct guest_record *r, const char *key, double value);
void guest_record_str(struct guest_record *r, const char *key, const char *value);
void guest_record_end(struct guest_record *r);

/* Print an error record and exit(status): a run that cannot measure says so. */
void guest_fail(const char *workload, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#endif
