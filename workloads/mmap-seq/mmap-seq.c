/* mmap-seq: seed 004's experiment (iozone -B): read a file larger than memory
 * sequentially through mmap(), several passes. Use-once for mapped pages decides
 * whether pages referenced once through the mapping get activated. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wl.h"

#define NAME "mmap-seq"

static struct wl_opt opts[] = {
	{"file", WL_STR, "/usr/share/reclaim/data/mmap-seq/big.bin", 0, 0, "the file to read"},
	{"passes", WL_INT, "3", 1, 20, "sequential passes over the file (iozone -i 1: a read and a re-read; one more)"},
	{"stride", WL_INT, "64", 8, 4096, "bytes between loads within a page (64: every cache line)"},
	{NULL},
};

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	const char *path = wl_str(opts, "file");
	long passes = wl_int(opts, "passes");
	size_t stride = wl_int(opts, "stride");
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)PAGE)
		guest_fail(NAME, 2, "cannot use the file '%s' (missing or smaller than a page)", path);
	size_t size = st.st_size / PAGE * PAGE;
	volatile const uint64_t *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map '%s'", path);

	uint64_t sum = 0;
	struct guest_record r;
	struct wl_vm before, after;
	for (long pass = 1; pass <= passes; pass++) {
		char phase[32];
		snprintf(phase, sizeof(phase), "pass%ld", pass);
		guest_phase(phase);
		wl_vm_read(&before);
		double t0 = guest_now();
		for (size_t off = 0; off < size; off += stride)
			sum += map[off / 8];
		double seconds = guest_now() - t0;
		wl_vm_read(&after);
		guest_record_begin(&r, NAME, "pass");
		guest_record_int(&r, "pass", pass);
		guest_record_num(&r, "seconds", seconds);
		guest_record_int(&r, "file_mib", size / MIB);
		guest_record_num(&r, "mib_per_s", seconds > 0 ? size / MIB / seconds : 0);
		wl_vm_delta(&r, &before, &after);
		guest_record_end(&r);
	}
	guest_record_begin(&r, NAME, "summary");
	guest_record_int(&r, "passes", passes);
	guest_record_int(&r, "file_mib", size / MIB);
	guest_record_int(&r, "memtotal_mib", wl_memtotal() / MIB);
	guest_record_int(&r, "checksum", (long long)(sum & 0xffff));
	guest_record_end(&r);
	return 0;
}
