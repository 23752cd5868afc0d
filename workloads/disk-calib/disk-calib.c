/* disk-calib: what a disk profile means from inside the guest. 4 KiB random reads
 * with O_DIRECT (latency of one request) and a sequential O_DIRECT read in large
 * blocks (throughput), both straight from the disk, bypassing the page cache.
 * gem5's IdeDisk.delay is a per-descriptor latency, not a seek model, so these two
 * numbers are what a profile is calibrated by. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wl.h"

#define NAME "disk-calib"

static struct wl_opt opts[] = {
	{"file", WL_STR, "/usr/share/reclaim/data/disk-calib/calib.bin", 0, 0, "a file on the disk to read"},
	{"random-reads", WL_INT, "200", 1, 1000000, "4 KiB random reads"},
	{"seq-mib", WL_INT, "16", 1, 1 << 20, "MiB read sequentially"},
	{"seq-block-kib", WL_INT, "1024", 4, 65536, "block size of the sequential reads, KiB"},
	{"seed", WL_INT, "1", 0, 1LL << 40, "chooses the random offsets"},
	{NULL},
};

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	const char *path = wl_str(opts, "file");
	int fd = open(path, O_RDONLY | O_DIRECT);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		guest_fail(NAME, 2, "cannot open '%s' with O_DIRECT", path);
	size_t block = wl_int(opts, "seq-block-kib") * 1024, seq = wl_int(opts, "seq-mib") * MIB;
	if ((size_t)st.st_size < seq || (size_t)st.st_size < block)
		guest_fail(NAME, 2, "'%s' (%lld MiB) is smaller than --seq-mib=%lld", path,
			   (long long)st.st_size / (long long)MIB, wl_int(opts, "seq-mib"));
	char *buf;
	if (posix_memalign((void **)&buf, PAGE, block))
		guest_fail(NAME, 1, "cannot allocate a buffer");
	wl_dirty_pages(buf, block, 0);
	uint64_t seed = wl_int(opts, "seed");
	long n = wl_int(opts, "random-reads");
	size_t pages = st.st_size / PAGE;
	struct guest_record r;

	guest_phase("random");
	double t0 = guest_now(), worst = 0;
	for (long i = 0; i < n; i++) {
		double s = guest_now();
		if (pread(fd, buf, PAGE, (off_t)(wl_rand(&seed) % pages) * PAGE) != (ssize_t)PAGE)
			guest_fail(NAME, 1, "a 4 KiB O_DIRECT read of '%s' failed", path);
		double took = guest_now() - s;
		worst = took > worst ? took : worst;
	}
	double random_s = guest_now() - t0;
	guest_record_begin(&r, NAME, "random");
	guest_record_int(&r, "reads", n);
	guest_record_num(&r, "mean_latency_s", random_s / n);
	guest_record_num(&r, "max_latency_s", worst);
	guest_record_end(&r);

	guest_phase("sequential");
	t0 = guest_now();
	for (size_t off = 0; off + block <= seq; off += block)
		if (pread(fd, buf, block, off) != (ssize_t)block)
			guest_fail(NAME, 1, "a sequential O_DIRECT read of '%s' failed", path);
	double seq_s = guest_now() - t0;
	guest_record_begin(&r, NAME, "sequential");
	guest_record_int(&r, "mib", seq / MIB);
	guest_record_num(&r, "seconds", seq_s);
	guest_record_num(&r, "mib_per_s", seq_s > 0 ? seq / (double)MIB / seq_s : 0);
	guest_record_end(&r);
	return 0;
}
