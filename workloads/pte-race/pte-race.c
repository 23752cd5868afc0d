/* pte-race: an instrument check for machines of two or more cores, no seed. Can the
 * page walker of one core undo another core's change to a page-table entry? One
 * thread (CPU 1) keeps writing into the pages of a region R, whose entries another
 * (CPU 0) makes clean and old with MADV_FREE and then clears with MADV_DONTNEED, over
 * and over; each round CPU 0 then faults in a second region R2, whose pages come from
 * the frames it has just freed. A walker that writes an entry's accessed and dirty
 * flags back with a plain write (gem5-patches/0003) can bring back an entry
 * MADV_DONTNEED cleared, mapping a freed frame: then one thread finds the other's
 * marker in its page, and Linux reports the broken mapping ("BUG: Bad page map",
 * "BUG: Bad rss-counter state", taint B). gem5-patches/0009 swaps the flags in only
 * if the entry is still the one the walk read. The racing runs in a child process,
 * so that Linux has checked its memory (at exit) when the kernel log is read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"

#define NAME "pte-race"
/* Markers: a region's tag in the top half, the page in the next 16 bits, the round. */
#define MARK_R 0x5252000000000000ULL
#define MARK_R2 0x3232000000000000ULL
#define TAG_MASK 0xffff000000000000ULL
#define PAGE_SHIFT_IN_MARK 32
#define TAINT_BAD_PAGE 5 /* 'B': Linux found a page in a state it should not be */

static struct wl_opt opts[] = {
	{"iterations", WL_INT, "200", 1, 100000, "rounds of MADV_FREE and MADV_DONTNEED on R"},
	{"pages", WL_INT, "64", 8, 1024, "pages of each region"},
	{NULL},
};

/* What the child process found; shared with the parent (MAP_SHARED). */
struct outcome {
	long long rounds, sweeps;
	long long foreign_in_r, foreign_in_r2;
	unsigned long long first_foreign;
};

static struct {
	char *r;
	size_t pages;
	struct outcome *out;
	int stop;           /* CPU 0 is done */
	int sweeps;         /* CPU 1's finished passes over R (a futex: CPU 0 sleeps on it) */
} shared;

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		guest_fail(NAME, 1, "cannot run on CPU %d (%s): this check needs two CPUs",
			   cpu, strerror(errno));
}

static void foreign(long long *count, uint64_t value)
{
	if (__atomic_fetch_add(count, 1, __ATOMIC_RELAXED) == 0)
		shared.out->first_foreign = value;
}

/* CPU 1: read each page's first word of R, which must be 0 (a fresh page) or a marker
 * of ours for that page, then write ours. Pages are taken from the last to the first,
 * against the order MADV_DONTNEED clears their entries in, so each pass crosses it. */
static void *writer(void *unused)
{
	(void)unused;
	pin(1);
	for (uint64_t sweep = 1; !__atomic_load_n(&shared.stop, __ATOMIC_ACQUIRE); sweep++) {
		for (size_t i = shared.pages; i-- > 0;) {
			volatile uint64_t *word = (volatile uint64_t *)(shared.r + i * PAGE);
			uint64_t seen = *word;
			if (seen && ((seen & TAG_MASK) != MARK_R ||
				     ((seen >> PAGE_SHIFT_IN_MARK) & 0xffff) != i))
				foreign(&shared.out->foreign_in_r, seen);
			*word = MARK_R | (uint64_t)i << PAGE_SHIFT_IN_MARK | (sweep & 0xffffffff);
		}
		__atomic_store_n(&shared.sweeps, (int)sweep, __ATOMIC_RELEASE);
		syscall(SYS_futex, &shared.sweeps, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return NULL;
}

static void race(size_t pages, long long iterations, struct outcome *out)
{
	size_t len = pages * PAGE;
	char *r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *r2 = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t thread;
	if (r == MAP_FAILED || r2 == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map two regions of %zu pages", pages);
	shared.r = r;
	shared.pages = pages;
	shared.out = out;
	pin(0);
	if (pthread_create(&thread, NULL, writer, NULL))
		guest_fail(NAME, 1, "cannot start the writing thread");
	for (long long round = 0; round < iterations; round++) {
		/* R filled by a whole pass of CPU 1 since the last round cleared it; CPU 0
		 * sleeps meanwhile (a spin would cost the simulator as much as the pass). */
		int now, want = __atomic_load_n(&shared.sweeps, __ATOMIC_ACQUIRE) + 2;
		while ((now = __atomic_load_n(&shared.sweeps, __ATOMIC_ACQUIRE)) < want)
			syscall(SYS_futex, &shared.sweeps, FUTEX_WAIT_PRIVATE, now, NULL, NULL, 0);
		/* Clean and old (and flushed from CPU 1's TLB), so that CPU 1's next write to
		 * each page walks and sets both flags; then cleared, and the frames freed. */
		if (madvise(r, len, MADV_FREE) || madvise(r, len, MADV_DONTNEED))
			guest_fail(NAME, 1, "madvise on R failed: %s", strerror(errno));
		/* R2's faults take the frames just freed, from this CPU's lists. */
		for (size_t j = 0; j < pages; j++)
			*(volatile uint64_t *)(r2 + j * PAGE) =
				MARK_R2 | (uint64_t)j << PAGE_SHIFT_IN_MARK | (uint64_t)round;
		for (size_t j = 0; j < pages; j++) {
			uint64_t seen = *(volatile uint64_t *)(r2 + j * PAGE);
			if (seen != (MARK_R2 | (uint64_t)j << PAGE_SHIFT_IN_MARK | (uint64_t)round))
				foreign(&out->foreign_in_r2, seen);
		}
		if (madvise(r2, len, MADV_DONTNEED))
			guest_fail(NAME, 1, "madvise on R2 failed: %s", strerror(errno));
		out->rounds = round + 1;
	}
	__atomic_store_n(&shared.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	out->sweeps = shared.sweeps;
}

/* Kernel log lines from `fd` (/dev/kmsg, read from where it stood before the race) that
 * say Linux found a broken mapping; the first is kept in `first`. */
static long bad_kernel_lines(int fd, char *first, size_t size)
{
	char line[2048];
	long bad = 0;
	ssize_t n;
	while ((n = read(fd, line, sizeof(line) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n < 0)
			continue; /* overwritten before we read it: go on from the oldest kept */
		line[n] = 0;
		char *text = strchr(line, ';');
		text = text ? text + 1 : line;
		text[strcspn(text, "\n")] = 0;
		if (strstr(text, "BUG:") || strstr(text, "Bad page") || strstr(text, "Bad rss-counter")) {
			if (!bad++)
				snprintf(first, size, "%.200s", text);
		}
	}
	return bad;
}

static long tainted(void)
{
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");
	long value = -1;
	if (!f || fscanf(f, "%ld", &value) != 1)
		guest_fail(NAME, 1, "cannot read /proc/sys/kernel/tainted");
	fclose(f);
	return value;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	size_t pages = wl_int(opts, "pages");
	long long iterations = wl_int(opts, "iterations");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		guest_fail(NAME, 1, "this check needs two CPUs; the machine has %ld",
			   sysconf(_SC_NPROCESSORS_ONLN));
	struct outcome *out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (out == MAP_FAILED || kmsg < 0 || lseek(kmsg, 0, SEEK_END) < 0)
		guest_fail(NAME, 1, "cannot read the kernel log (/dev/kmsg)");
	long tainted_before = tainted();
	guest_phase("race");
	double start = guest_now();
	pid_t child = fork();
	if (child < 0)
		guest_fail(NAME, 1, "cannot fork");
	if (child == 0) {
		race(pages, iterations, out);
		_exit(0);
	}
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		guest_fail(NAME, 1, "the racing process failed (wait status %d)", status);
	double seconds = guest_now() - start;
	char first[256] = "";
	long bad = bad_kernel_lines(kmsg, first, sizeof(first));
	long after = tainted();
	char value[32];
	snprintf(value, sizeof(value), "%#llx", out->first_foreign);

	struct guest_record r;
	guest_record_begin(&r, NAME, "race");
	guest_record_int(&r, "pages", (long long)pages);
	guest_record_int(&r, "iterations", out->rounds);
	guest_record_int(&r, "writer_sweeps", out->sweeps);
	guest_record_int(&r, "foreign_in_r", out->foreign_in_r);
	guest_record_int(&r, "foreign_in_r2", out->foreign_in_r2);
	guest_record_str(&r, "first_foreign", out->foreign_in_r + out->foreign_in_r2 ? value : "");
	guest_record_int(&r, "kernel_bad_lines", bad);
	guest_record_str(&r, "kernel_first_bad_line", first);
	guest_record_int(&r, "tainted_before", tainted_before);
	guest_record_int(&r, "tainted", after);
	guest_record_int(&r, "tainted_bad_page", (after >> TAINT_BAD_PAGE) & 1);
	guest_record_num(&r, "seconds", seconds);
	guest_record_end(&r);
	return 0;
}
