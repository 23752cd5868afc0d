/* lazyfree: seed 002's ebizzy experiment. Threads repeatedly take a buffer from an
 * allocator, copy a random chunk of a shared pool into it, search it for a key, and
 * free it. Our arena allocator returns a freed buffer to the kernel with MADV_FREE
 * (or MADV_DONTNEED, --free=dontneed) and reuses the mapping: with MADV_FREE the
 * reuse touches still-mapped pages, with MADV_DONTNEED every page faults again.
 * --allocator=malloc uses malloc/free instead (run under Debian's jemalloc by the
 * driver). Records per thread count: records per second, lazy-free counters, faults. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "wl.h"

#define NAME "lazyfree"
#define MAX_THREADS 64

static struct wl_opt opts[] = {
	{"threads", WL_STR, "1,2,4", 0, 0, "thread counts, one phase each (the seed: 1 to 32)"},
	{"records", WL_INT, "100", 1, 100000, "records (copy + search) per thread"},
	{"chunks", WL_INT, "64", 1, 100000, "chunks in the shared pool (ebizzy -n)"},
	{"chunk-kib", WL_INT, "256", 4, 4096, "chunk size, KiB"},
	{"allocator", WL_STR, "arena", 0, 0, "arena (our own, madvise on free) or malloc"},
	{"free", WL_STR, "free", 0, 0, "arena's madvise on free: free (MADV_FREE) or dontneed"},
	{"label", WL_STR, "", 0, 0, "phase name prefix (default: the allocator)"},
	{"seed", WL_INT, "1", 0, 1000000, "chooses chunks and keys"},
	{NULL},
};

static uint64_t **pool;
static size_t chunk_words, nchunks;
static long records;
static int use_malloc, advice;

struct worker {
	pthread_t thread;
	uint64_t seed;
	long found;
};

/* One cached buffer per thread: freeing returns its pages with madvise and keeps
 * the mapping, as an allocator's free run would. */
static uint64_t *take(uint64_t **cache, size_t bytes)
{
	if (use_malloc)
		return malloc(bytes);
	if (*cache)
		return *cache;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void give_back(uint64_t **cache, uint64_t *buf, size_t bytes)
{
	if (use_malloc) {
		free(buf);
		return;
	}
	madvise(buf, bytes, advice);
	*cache = buf;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t *cache = NULL;
	size_t bytes = chunk_words * 8;
	for (long n = 0; n < records; n++) {
		uint64_t *buf = take(&cache, bytes);
		if (!buf)
			return NULL;
		const uint64_t *src = pool[wl_rand(&w->seed) % nchunks];
		/* A word loop, not memcpy: gem5 runs rep-string copies very slowly. */
		for (size_t i = 0; i < chunk_words; i++)
			((volatile uint64_t *)buf)[i] = src[i];
		uint64_t key = src[wl_rand(&w->seed) % chunk_words];
		for (size_t i = 0; i < chunk_words; i++)
			if (((volatile uint64_t *)buf)[i] == key) {
				w->found++;
				break;
			}
		give_back(&cache, buf, bytes);
	}
	return w;
}

static long parse_threads(const char *text, int *counts)
{
	long n = 0;
	char copy[256], *save = NULL;
	strncpy(copy, text, sizeof(copy) - 1);
	copy[sizeof(copy) - 1] = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(t, &end, 10);
		if (*end || v < 1 || v > MAX_THREADS || n == 16)
			guest_fail(NAME, 2, "bad --threads=%s: allowed up to 16 counts from 1 to %d, comma-separated",
				   text, MAX_THREADS);
		counts[n++] = (int)v;
	}
	if (!n)
		guest_fail(NAME, 2, "bad --threads=%s: give at least one count", text);
	return n;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	int counts[16];
	long ncounts = parse_threads(wl_str(opts, "threads"), counts);
	const char *allocator = wl_str(opts, "allocator"), *free_mode = wl_str(opts, "free");
	if (strcmp(allocator, "arena") && strcmp(allocator, "malloc"))
		guest_fail(NAME, 2, "bad --allocator=%s: allowed arena, malloc", allocator);
	if (strcmp(free_mode, "free") && strcmp(free_mode, "dontneed"))
		guest_fail(NAME, 2, "bad --free=%s: allowed free, dontneed", free_mode);
	use_malloc = !strcmp(allocator, "malloc");
	advice = !strcmp(free_mode, "free") ? MADV_FREE : MADV_DONTNEED;
	records = wl_int(opts, "records");
	nchunks = wl_int(opts, "chunks");
	chunk_words = wl_int(opts, "chunk-kib") * 1024 / 8;
	const char *label = *wl_str(opts, "label") ? wl_str(opts, "label") : allocator;

	uint64_t seed = wl_int(opts, "seed");
	pool = malloc(nchunks * sizeof(*pool));
	for (size_t c = 0; c < nchunks; c++) {
		pool[c] = malloc(chunk_words * 8);
		if (!pool[c])
			guest_fail(NAME, 1, "cannot allocate the pool");
		for (size_t i = 0; i < chunk_words; i++)
			pool[c][i] = wl_rand(&seed);
	}

	struct worker workers[MAX_THREADS];
	struct guest_record r;
	struct wl_vm before, after;
	for (long k = 0; k < ncounts; k++) {
		char phase[64];
		snprintf(phase, sizeof(phase), "%s-t%d", label, counts[k]);
		guest_phase(phase);
		wl_vm_read(&before);
		double t0 = guest_now();
		for (int t = 0; t < counts[k]; t++) {
			workers[t] = (struct worker){.seed = seed + 7919 * (t + 1) + k};
			if (pthread_create(&workers[t].thread, NULL, work, &workers[t]))
				guest_fail(NAME, 1, "cannot start thread %d", t);
		}
		long found = 0;
		for (int t = 0; t < counts[k]; t++) {
			void *ok;
			pthread_join(workers[t].thread, &ok);
			if (!ok)
				guest_fail(NAME, 1, "thread %d could not allocate its buffer", t);
			found += workers[t].found;
		}
		double seconds = guest_now() - t0;
		wl_vm_read(&after);
		guest_record_begin(&r, NAME, "result");
		guest_record_str(&r, "allocator", label);
		guest_record_int(&r, "threads", counts[k]);
		guest_record_int(&r, "records", records * counts[k]);
		guest_record_num(&r, "seconds", seconds);
		guest_record_num(&r, "records_per_s", seconds > 0 ? records * counts[k] / seconds : 0);
		guest_record_int(&r, "found", found);
		wl_vm_delta(&r, &before, &after);
		guest_record_end(&r);
	}
	return 0;
}
