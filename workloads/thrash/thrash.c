/* thrash: seed 001's experiment, rewritten. Fill memory with anonymous pages, then
 * read a file through two mappings (first half PROT_EXEC, second half PROT_READ)
 * round after round. Without anon scanning on file refaults every round reads the
 * file from disk; with it the file becomes cached after a few rounds. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wl.h"

#define NAME "thrash"
#define DATA_DIR "/usr/share/reclaim/data/thrash/"

static struct wl_opt opts[] = {
	{"anon-mib", WL_INT, "0", 0, 1 << 20, "anonymous memory to fill, MiB (0: --anon-fraction of MemTotal)"},
	{"anon-fraction", WL_NUM, "1.0", 0.1, 3.0, "anonymous memory as a fraction of MemTotal"},
	{"file", WL_STR, "large.bin", 0, 0, "the file to read (a bare name: in the workload's data folder)"},
	{"file-mib", WL_INT, "0", 0, 1 << 20, "MiB of the file to use (0: all of it)"},
	{"rounds", WL_INT, "10", 1, 100, "passes over the file"},
	{NULL},
};

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	const char *name = wl_str(opts, "file");
	char path[512];
	snprintf(path, sizeof(path), "%s%s", strchr(name, '/') ? "" : DATA_DIR, name);
	size_t anon = wl_size(wl_int(opts, "anon-mib"), wl_num(opts, "anon-fraction"));
	long rounds = wl_int(opts, "rounds");

	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		guest_fail(NAME, 2, "cannot open the file '%s'", path);
	size_t size = wl_int(opts, "file-mib") ? (size_t)wl_int(opts, "file-mib") * MIB : (size_t)st.st_size;
	size = size / (2 * PAGE) * 2 * PAGE;
	if (size > (size_t)st.st_size)
		guest_fail(NAME, 2, "--file-mib=%lld is larger than the file '%s' (%lld MiB)",
			   wl_int(opts, "file-mib"), path, (long long)st.st_size / (long long)MIB);
	if (size < 2 * PAGE)
		guest_fail(NAME, 2, "the file '%s' is too small (%lld bytes)", path, (long long)st.st_size);

	struct wl_vm before, after;
	struct guest_record r;
	guest_phase("fill");
	wl_vm_read(&before);
	double t0 = guest_now();
	char *mem = mmap(NULL, anon, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map %zu MiB of anonymous memory", anon / MIB);
	wl_dirty_pages(mem, anon, 1);
	wl_vm_read(&after);
	guest_record_begin(&r, NAME, "fill");
	guest_record_int(&r, "anon_mib", anon / MIB);
	guest_record_num(&r, "seconds", guest_now() - t0);
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);

	/* As in the seed: half the file is mapped executable (like a large program's
	 * text), half readable, and both are walked a page at a time. */
	size_t half = size / 2;
	volatile char *exec = mmap(NULL, half, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	volatile char *data = mmap(NULL, half, PROT_READ, MAP_SHARED, fd, half);
	if (exec == MAP_FAILED || data == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map the file '%s'", path);

	guest_phase("access");
	uint64_t sum = 0;
	for (long round = 0; round < rounds; round++) {
		wl_vm_read(&before);
		t0 = guest_now();
		for (size_t off = 0; off < half; off += PAGE)
			sum += exec[off] + data[off];
		double seconds = guest_now() - t0;
		wl_vm_read(&after);
		guest_record_begin(&r, NAME, "round");
		guest_record_int(&r, "round", round);
		guest_record_num(&r, "seconds", seconds);
		guest_record_int(&r, "file_mib", size / MIB);
		wl_vm_delta(&r, &before, &after);
		guest_record_end(&r);
	}
	/* Keep the anonymous memory in use until the end, as the seed's program did. */
	sum += wl_read_pages(mem, PAGE);
	guest_record_begin(&r, NAME, "summary");
	guest_record_int(&r, "rounds", rounds);
	guest_record_int(&r, "anon_mib", anon / MIB);
	guest_record_int(&r, "file_mib", size / MIB);
	guest_record_int(&r, "checksum", (long long)(sum & 0xffff));
	guest_record_end(&r);
	return 0;
}
