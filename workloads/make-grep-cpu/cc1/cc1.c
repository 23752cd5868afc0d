/* make-grep-cpu's compiler, run once per unit: an executable whose text (NPAGES pages,
 * workloads/lib/app/pages.S) runs in full at every launch, as cc1's did. It maps its
 * unit (--data) and reads every page of it, dirties its working memory (--heap-mib),
 * reads the --includes headers, hashes what it read, then computes: --compile-work
 * dependent steps through its working memory per KiB of unit and headers read (a
 * compiler's walks through its symbol tables and trees, which keep a CPU busy), and
 * writes an object a quarter of the unit's size, seeded by the result, to --out.
 * Built by make-data at image build (its text is sized by the guest's memory), so it
 * lives below cc1/, which the workloads' Makefile does not build. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wl.h"

#define NAME "make-grep-cpu"

extern const char app_pages[];
extern const uint64_t app_npages;

static struct wl_opt opts[] = {
	{"data", WL_STR, "", 0, 0, "the unit to compile (mapped read-only)"},
	{"heap-mib", WL_INT, "2", 0, 64, "working memory, MiB"},
	{"includes", WL_STR, "", 0, 0, "headers to read, separated by commas"},
	{"out", WL_STR, "", 0, 0, "the object file to write"},
	{"compile-work", WL_INT, "0", 0, 100000, "steps through the working memory per KiB of unit and headers read"},
	{NULL},
};

static uint64_t mix(uint64_t sum, const char *p, size_t len)
{
	for (size_t off = 0; off + 8 <= len; off += 64)
		sum = (sum ^ *(const uint64_t *)(p + off)) * 0x100000001b3ULL;
	return sum;
}

/* Each step loads the word the hash so far points at and stores the next hash there:
 * no step can start before the one before it has loaded, nor be left out. */
static uint64_t walk(uint64_t h, uint64_t *words, size_t nwords, long long steps)
{
	for (long long s = 0; s < steps; s++) {
		size_t i = (size_t)(h >> 20) % nwords;
		h = (h + words[i] + 1) * 0x9e3779b97f4a7c15ULL; /* added: a word it wrote cannot cancel */
		h ^= h >> 31;
		words[i] = h;
	}
	return h;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	long long work = wl_int(opts, "compile-work");
	size_t heap_len = wl_int(opts, "heap-mib") * MIB;
	if (work && heap_len == 0)
		guest_fail(NAME, 2, "bad --compile-work=%lld: the walk needs working memory (--heap-mib above 0)",
			   work);
	const char *data = wl_str(opts, "data");
	int fd = open(data, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		guest_fail(NAME, 2, "cannot open the unit '%s'", data);
	size_t data_len = st.st_size / PAGE * PAGE;
	const char *unit = data_len ? mmap(NULL, data_len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	if (unit == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map '%s'", data);
	close(fd);
	char *heap = heap_len ? mmap(NULL, heap_len, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
	if (heap == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map %zu MiB of working memory", heap_len / MIB);

	/* The launch: all of the text, every page of the unit, all of the working memory. */
	uint64_t sum = 0;
	for (uint64_t p = 0; p < app_npages; p++)
		((void (*)(void))(app_pages + p * PAGE))();
	for (size_t off = 0; off < data_len; off += PAGE)
		sum += *(const volatile uint64_t *)(unit + off);
	for (size_t off = 0; off < heap_len; off += PAGE)
		*(volatile uint64_t *)(heap + off) += 1;

	char includes[4096];
	static char buf[65536];
	long long read_bytes = (long long)data_len;
	snprintf(includes, sizeof(includes), "%s", wl_str(opts, "includes"));
	for (char *h = strtok(includes, ","); h; h = strtok(NULL, ",")) {
		int hfd = open(h, O_RDONLY);
		if (hfd < 0)
			guest_fail(NAME, 1, "cannot read the header '%s'", h);
		ssize_t n;
		while ((n = read(hfd, buf, sizeof(buf))) > 0) {
			sum = mix(sum, buf, n);
			read_bytes += n;
		}
		close(hfd);
	}
	sum = mix(sum, unit, data_len);
	if (work)
		sum = walk(sum, (uint64_t *)heap, heap_len / sizeof(uint64_t), work * (read_bytes / 1024));
	const char *out = wl_str(opts, "out");
	if (*out && wl_write_random_file(out, data_len / 4 + 1, sum))
		guest_fail(NAME, 1, "cannot write the object '%s'", out);
	return 0;
}
