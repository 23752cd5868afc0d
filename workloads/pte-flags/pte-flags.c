/* pte-flags: an instrument check that reproduces no seed. Does the machine set the
 * accessed flag of a page-table entry when a page is used again after Linux cleared
 * it, and the dirty flag when a page is written? Reclaim ages mapped pages by the
 * first (folio_referenced) and keeps a page rewritten after MADV_FREE by the second
 * (gem5-patches/0003). /proc/self/smaps shows both:
 * "Referenced" counts pages whose entry is young, "LazyFree" the MADV_FREE pages
 * whose entry is still clean. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "wl.h"

#define NAME "pte-flags"
#define FILE_PATH "/tmp/pte-flags.bin"

static struct wl_opt opts[] = {
	{"pages", WL_INT, "64", 8, 4096, "pages of the mapped file and of the anonymous area"},
	{NULL},
};

/* A field ("Referenced", "LazyFree") of the smaps block of the mapping at `start`, kB. */
static long smaps_kib(const void *start, const char *field)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], head[32];
	size_t flen = strlen(field);
	int inside = 0;
	long value = -1;
	if (!f)
		guest_fail(NAME, 1, "cannot read /proc/self/smaps");
	snprintf(head, sizeof(head), "%lx-", (unsigned long)start);
	while (fgets(line, sizeof(line), f)) {
		char *space = strchr(line, ' ');
		if (space && space > line && space[-1] != ':')  /* a mapping's header line */
			inside = !strncmp(line, head, strlen(head));
		else if (inside && !strncmp(line, field, flen) && line[flen] == ':')
			value = strtol(line + flen + 1, NULL, 10);
	}
	fclose(f);
	if (value < 0)
		guest_fail(NAME, 1, "no %s for the mapping at %p in /proc/self/smaps", field, start);
	return value;
}

/* Faults so far: a flag set by the kernel on a fault, not by the machine, shows here. */
static long faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static void clear_refs(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		guest_fail(NAME, 1, "cannot clear the accessed flags (/proc/self/clear_refs)");
	close(fd);
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	size_t pages = wl_int(opts, "pages"), len = pages * PAGE;
	guest_phase("check");

	/* Accessed: a mapped file's pages, used, cleared, used again. */
	int fd = open(FILE_PATH, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *buf = malloc(len);
	if (fd < 0 || !buf)
		guest_fail(NAME, 1, "cannot make %s", FILE_PATH);
	wl_dirty_pages(buf, len, 1);
	if (write(fd, buf, len) != (ssize_t)len)
		guest_fail(NAME, 1, "cannot write %s", FILE_PATH);
	char *file = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (file == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map %s", FILE_PATH);
	wl_read_pages(file, len);
	long used = smaps_kib(file, "Referenced");
	clear_refs();
	/* Drop any translation the TLB still holds (clear_refs does not flush it), so the
	 * next use walks the page table, where the flag is set. */
	if (mprotect(file, len, PROT_NONE) || mprotect(file, len, PROT_READ))
		guest_fail(NAME, 1, "mprotect failed");
	long cleared = smaps_kib(file, "Referenced");
	long f0 = faults();
	wl_read_pages(file, len);
	long read_faults = faults() - f0;
	long again = smaps_kib(file, "Referenced");

	/* Dirty: anonymous pages given back with MADV_FREE (their entries made clean),
	 * then written again. */
	char *anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map %zu anonymous pages", pages);
	wl_dirty_pages(anon, len, 2);
	if (madvise(anon, len, MADV_FREE))
		guest_fail(NAME, 1, "madvise(MADV_FREE) failed");
	long lazy = smaps_kib(anon, "LazyFree");
	f0 = faults();
	wl_dirty_pages(anon, len, 3);
	long write_faults = faults() - f0;
	long rewritten = smaps_kib(anon, "LazyFree");

	struct guest_record r;
	guest_record_begin(&r, NAME, "flags");
	guest_record_int(&r, "pages", (long long)pages);
	guest_record_int(&r, "referenced_kib_used", used);
	guest_record_int(&r, "referenced_kib_cleared", cleared);
	guest_record_int(&r, "referenced_kib_used_again", again);
	guest_record_int(&r, "lazyfree_kib_freed", lazy);
	guest_record_int(&r, "lazyfree_kib_rewritten", rewritten);
	guest_record_int(&r, "faults_reading_again", read_faults);
	guest_record_int(&r, "faults_rewriting", write_faults);
	guest_record_end(&r);
	munmap(file, len);
	close(fd);
	unlink(FILE_PATH);
	return 0;
}
