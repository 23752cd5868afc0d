/* Helpers shared by the workloads: checked options, sizes from MemTotal, a seeded
 * generator, page touching that stays cheap in gem5, vmstat deltas. */
#ifndef RECLAIM_WL_H
#define RECLAIM_WL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guest.h"

#define PAGE 4096UL
#define MIB (1024UL * 1024UL)

enum wl_type { WL_INT, WL_NUM, WL_STR };

struct wl_opt {
	const char *name;   /* --name=value on the command line */
	enum wl_type type;
	const char *def;    /* default, as text */
	double min, max;    /* bounds for WL_INT and WL_NUM */
	const char *help;
	/* parsed value */
	long long i;
	double d;
	const char *s;
};

/* Parse --name=value words into `opts` (terminated by a zeroed entry). A bad or
 * unknown option prints the error event and exits 2; --help prints the options. */
void wl_parse(const char *prog, struct wl_opt *opts, int argc, char **argv);
long long wl_int(const struct wl_opt *opts, const char *name);
double wl_num(const struct wl_opt *opts, const char *name);
const char *wl_str(const struct wl_opt *opts, const char *name);

/* A /proc/meminfo line's value in bytes (0 if absent), and MemTotal's. */
size_t wl_meminfo(const char *key);
size_t wl_memtotal(void);
/* `mib` MiB when > 0, else `fraction` of MemTotal; rounded to whole pages. */
size_t wl_size(long long mib, double fraction);

/* splitmix64: small, seeded, reproducible. */
uint64_t wl_rand(uint64_t *state);

/* Write one word in every page of [p, p+len): dirties the pages without rep-string
 * instructions, which gem5's x86 model runs very slowly. */
void wl_dirty_pages(void *p, size_t len, uint64_t value);
/* Read one word in every page; returns a sum so the reads are not optimised away. */
uint64_t wl_read_pages(const void *p, size_t len);

/* Read a whole file with pread in `chunk`-byte steps; returns bytes read or -1. */
long long wl_read_file(const char *path, size_t chunk);

/* Fill `path` with `bytes` of seeded pseudo-random data (for --generate-data). */
int wl_write_random_file(const char *path, size_t bytes, uint64_t seed);

/* Start a generated application (workloads/lib/app) with argv: its stdin reads
 * our commands (*cmd_fd), its fd 3 carries its replies (*reply_fd). */
pid_t wl_spawn_app(char *const argv[], int *cmd_fd, int *reply_fd);

/* Counters at a point, to take deltas of. */
struct wl_vm {
	long long pgmajfault, pswpin, pswpout, pgactivate, pgdeactivate, refault_anon,
		refault_file, activate_file, pglazyfree, pglazyfreed, pgfault, nr_mapped;
};
void wl_vm_read(struct wl_vm *vm);
/* Add `after - before` of every counter to a record (keys prefixed "d_"). */
void wl_vm_delta(struct guest_record *r, const struct wl_vm *before, const struct wl_vm *after);

#endif
