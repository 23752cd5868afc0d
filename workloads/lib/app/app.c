/* A generated "application" for the desktop-launch and hot-stream workloads.
 *
 * window mode: at launch, run every page of its text (and, when linked against the
 * desktop's libtoolkit.so, the library's core and the parts this application uses),
 * map and read its data file, allocate and dirty its heap, then say ready; on each
 * switch command touch its hot code, data and heap (a window brought to the front)
 * and say done.
 * Hot sets are chosen in groups, not page by page: a program's hot functions sit
 * together in the text (a source file's functions are linked together) and its hot
 * objects were allocated together, so a group of pages is hot or cold as one.
 *   stdin: commands ('S' switch, 'Q' quit); fd 3: replies ('R' ready, 'D' done).
 * interactive mode: wake every --period-us, touch the hot set, and keep wake-up
 * latencies; on 'P' print a record of the phase just ended (latency percentiles
 * and its own major faults), on 'Q' print one and exit.
 * compile mode (make-grep's compiler): run all of its text, read its unit (--data)
 * and the --includes headers, dirty its heap (the compiler's working memory), hash
 * them all, write an object a quarter of the unit's size to --out, and exit. */
#define _GNU_SOURCE /* ppoll */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wl.h"

#define NAME "app"
#define MAX_WAKES 100000

extern const char app_pages[];
extern const uint64_t app_npages;
#ifdef TOOLKIT
extern const char tk_pages[];
extern const uint64_t tk_npages;
#endif

#define CODE_GROUP 8  /* pages: a source file's functions */
#define DATA_GROUP 16 /* pages: objects allocated together */

static struct wl_opt opts[] = {
	{"mode", WL_STR, "window", 0, 0, "window or interactive"},
	{"id", WL_INT, "0", 0, 1000, "the application's number, for records"},
	{"data", WL_STR, "", 0, 0, "its data file (mapped read-only)"},
	{"heap-mib", WL_INT, "4", 0, 1 << 16, "anonymous heap, MiB"},
	{"hot-percent", WL_INT, "25", 1, 100, "percent of code, data and heap pages touched per switch or wake-up"},
	{"period-us", WL_INT, "5000", 100, 60000000, "interactive: wake-up period"},
	{"includes", WL_STR, "", 0, 0, "compile: headers to read, separated by commas"},
	{"out", WL_STR, "", 0, 0, "compile: the object file to write"},
	{"seed", WL_INT, "1", 0, 1LL << 40, "chooses the hot pages"},
	{NULL},
};

struct app {
	const char *data;
	size_t data_len;
	char *heap;
	size_t heap_len;
	int hot_percent;
	uint64_t seed;
	uint64_t sum;
	uint64_t hot_pages, hot_hash; /* what switches touched: the seed decides it */
};

/* Is the group holding `page` of `region` (1 code, 2 data, 3 heap, 4 toolkit) hot? */
static int hot(struct app *a, size_t page, uint64_t region, size_t group)
{
	uint64_t s = a->seed ^ (region << 32) ^ (page / group);
	if ((int)(wl_rand(&s) % 100) >= a->hot_percent)
		return 0;
	a->hot_pages++;
	a->hot_hash = (a->hot_hash ^ (region << 40 ^ page)) * 0x100000001b3ULL;
	return 1;
}

static void run_pages(const char *pages, uint64_t from, uint64_t to)
{
	for (uint64_t p = from; p < to; p++)
		((void (*)(void))(pages + p * PAGE))();
}

static void run_code(struct app *a, int all)
{
	for (uint64_t p = 0; p < app_npages; p++)
		if (all || hot(a, p, 1, CODE_GROUP))
			run_pages(app_pages, p, p + 1);
#ifdef TOOLKIT
	/* The library's first quarter is its core (main loop, drawing), which every
	 * application runs whenever it runs; of the rest, each uses its own groups. */
	uint64_t core = tk_npages / 4;
	run_pages(tk_pages, 0, core);
	for (uint64_t p = core; p < tk_npages; p++)
		if (hot(a, p, 4, CODE_GROUP))
			run_pages(tk_pages, p, p + 1);
#endif
}

static void touch(struct app *a, int all)
{
	run_code(a, all);
	for (size_t off = 0; off < a->data_len; off += PAGE)
		if (all || hot(a, off / PAGE, 2, DATA_GROUP))
			a->sum += *(const volatile uint64_t *)(a->data + off);
	for (size_t off = 0; off < a->heap_len; off += PAGE)
		if (all || hot(a, off / PAGE, 3, DATA_GROUP))
			*(volatile uint64_t *)(a->heap + off) += 1;
}

static void reply(char c)
{
	if (write(3, &c, 1) != 1)
		exit(1);
}

static long long majflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_majflt;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* `polls`: times it waited, so a test can tell sleeping (about one wait per wake-up)
 * from spinning (many) without reading CPU times, which vary from host to host. */
static void phase_record(int id, double *lat, long n, long polls, long long faults,
			 const char *why)
{
	struct guest_record r;
	qsort(lat, n, sizeof(*lat), cmp);
	guest_record_begin(&r, "hot-stream", "interactive");
	guest_record_int(&r, "app", id);
	guest_record_str(&r, "ended_by", why);
	guest_record_int(&r, "wakeups", n);
	guest_record_int(&r, "polls", polls);
	guest_record_int(&r, "majflt", faults);
	if (n) {
		guest_record_num(&r, "latency_p50_s", lat[n / 2]);
		guest_record_num(&r, "latency_p95_s", lat[n * 95 / 100]);
		guest_record_num(&r, "latency_max_s", lat[n - 1]);
	}
	guest_record_end(&r);
}

static void interactive(struct app *a, int id, double period)
{
	static double lat[MAX_WAKES];
	long n = 0, polls = 0;
	long long faults0 = majflt();
	double next = guest_now() + period;
	for (;;) {
		/* Sleep the whole remaining time: poll()'s millisecond timeout would round a
		 * wait under 1 ms down to 0 and spin until the wake-up instead. */
		double wait = next - guest_now();
		struct timespec left = {0, 0};
		if (wait > 0) {
			left.tv_sec = (time_t)wait;
			left.tv_nsec = (long)((wait - (double)left.tv_sec) * 1e9);
		}
		struct pollfd pfd = {.fd = 0, .events = POLLIN};
		polls++;
		if (ppoll(&pfd, 1, &left, NULL) > 0) {
			char c;
			if (read(0, &c, 1) != 1 || c == 'Q') {
				phase_record(id, lat, n, polls, majflt() - faults0, "quit");
				return;
			}
			if (c == 'P') {
				phase_record(id, lat, n, polls, majflt() - faults0, "phase");
				n = polls = 0;
				faults0 = majflt();
				reply('D');
			}
			continue;
		}
		double woke = guest_now();
		if (woke < next)
			continue;
		touch(a, 0);
		if (n < MAX_WAKES)
			lat[n++] = guest_now() - next;  /* from the intended wake-up to work done */
		next = woke + period;
	}
}

/* The compiler's work after its launch: the headers, the hash, the object. */
static int compile(struct app *a)
{
	char includes[4096], buf[65536];
	snprintf(includes, sizeof(includes), "%s", wl_str(opts, "includes"));
	for (char *h = strtok(includes, ","); h; h = strtok(NULL, ",")) {
		int fd = open(h, O_RDONLY);
		if (fd < 0)
			guest_fail(NAME, 1, "compile: cannot read the header '%s'", h);
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			for (ssize_t i = 0; i + 8 <= n; i += 64)
				a->sum = (a->sum ^ *(uint64_t *)(buf + i)) * 0x100000001b3ULL;
		close(fd);
	}
	for (size_t off = 0; off + 8 <= a->data_len; off += 64)
		a->sum = (a->sum ^ *(const uint64_t *)(a->data + off)) * 0x100000001b3ULL;
	const char *out = wl_str(opts, "out");
	if (*out && wl_write_random_file(out, a->data_len / 4 + 1, a->sum))
		guest_fail(NAME, 1, "compile: cannot write '%s'", out);
	return 0;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	struct app a = {.hot_percent = wl_int(opts, "hot-percent"), .seed = wl_int(opts, "seed")};
	const char *data = wl_str(opts, "data");
	if (*data) {
		int fd = open(data, O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0)
			guest_fail(NAME, 2, "cannot open the data file '%s'", data);
		a.data_len = st.st_size / PAGE * PAGE;
		a.data = a.data_len ? mmap(NULL, a.data_len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
		if (a.data == MAP_FAILED)
			guest_fail(NAME, 1, "cannot map '%s'", data);
		close(fd);
	}
	a.heap_len = wl_int(opts, "heap-mib") * MIB;
	if (a.heap_len) {
		a.heap = mmap(NULL, a.heap_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a.heap == MAP_FAILED)
			guest_fail(NAME, 1, "cannot map a %zu MiB heap", a.heap_len / MIB);
	}
	touch(&a, 1);  /* launch: all of the code, data and heap */
	if (!strcmp(wl_str(opts, "mode"), "compile"))
		return compile(&a);
	if (!strcmp(wl_str(opts, "mode"), "interactive")) {
		reply('R');
		interactive(&a, wl_int(opts, "id"), wl_int(opts, "period-us") / 1e6);
		return 0;
	}
	if (strcmp(wl_str(opts, "mode"), "window"))
		guest_fail(NAME, 2, "bad --mode=%s: allowed window, interactive, compile",
			   wl_str(opts, "mode"));
	reply('R');
	char c;
	long long switches = 0;
	a.hot_pages = a.hot_hash = 0;
	while (read(0, &c, 1) == 1 && c != 'Q') {
		if (c == 'S') {
			touch(&a, 0);
			switches++;
			reply('D');
		}
	}
	struct guest_record r;
	guest_record_begin(&r, "desktop-launch", "hot_set");
	guest_record_int(&r, "app", wl_int(opts, "id"));
	guest_record_int(&r, "switches", switches);
	guest_record_int(&r, "pages", (long long)a.hot_pages);
	char hash[24];
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)a.hot_hash);
	guest_record_str(&r, "hash", hash);
	guest_record_end(&r);
	return (int)(a.sum & 0);
}
