/* disk-calib: what a disk profile means from inside the guest, one phase per IO
 * pattern: random 4 KiB reads and writes, sequential reads and writes in large
 * blocks, the swap-out of anonymous pages and their swap-in. File IO is O_DIRECT (straight to the
 * disk); random writes add O_DSYNC (each one is on the media when it returns, through
 * a drive's write-back cache too); the sequential write goes raw to the swap device
 * (before anything is swapped) and ends with one fdatasync; swap-out pages anonymous memory out with
 * MADV_PAGEOUT and waits for the writes; swap-in touches those pages again in random
 * order, each touch a major fault unless swap readahead brought the page in with an
 * earlier one. The calibration test holds each phase against what
 * the profile's parameters predict (reclaimstudy/disk_model.py). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <unistd.h>

#include "wl.h"

#define NAME "disk-calib"

static struct wl_opt opts[] = {
	{"file", WL_STR, "/usr/share/reclaim/data/disk-calib/calib.bin", 0, 0, "a file on the disk to read and overwrite"},
	{"random-reads", WL_INT, "200", 1, 100000, "4 KiB random reads"},
	{"seq-mib", WL_INT, "16", 1, 64, "MiB read sequentially"},
	{"seq-block-kib", WL_INT, "1024", 4, 65536, "block size of the sequential reads and writes, KiB"},
	{"random-writes", WL_INT, "100", 0, 100000, "4 KiB random writes (0: none)"},
	{"seq-write-mib", WL_INT, "16", 0, 64, "MiB written sequentially (0: none)"},
	{"swap-out-mib", WL_INT, "32", 0, 1024, "MiB of anonymous memory paged out to swap, then read back in random order (0: none)"},
	{"seed", WL_INT, "1", 0, 1LL << 40, "chooses the random offsets"},
	{NULL},
};

static void random_io(const char *phase, int fd, char *buf, long n, size_t pages,
		      uint64_t *seed, int write)
{
	struct guest_record r;
	guest_phase(phase);  /* every phase is marked, so gem5 dumps a block for each */
	if (n == 0)
		return;
	double t0 = guest_now(), worst = 0;
	for (long i = 0; i < n; i++) {
		off_t off = (off_t)(wl_rand(seed) % pages) * PAGE;
		double s = guest_now();
		ssize_t done = write ? pwrite(fd, buf, PAGE, off) : pread(fd, buf, PAGE, off);
		if (done != (ssize_t)PAGE)
			guest_fail(NAME, 1, "a 4 KiB O_DIRECT %s failed", write ? "write" : "read");
		double took = guest_now() - s;
		worst = took > worst ? took : worst;
	}
	double total = guest_now() - t0;
	guest_record_begin(&r, NAME, phase);
	guest_record_int(&r, "ops", n);
	guest_record_num(&r, "mean_latency_s", total / n);
	guest_record_num(&r, "max_latency_s", worst);
	guest_record_end(&r);
}

static void sequential_read(int fd, char *buf, size_t block, size_t bytes)
{
	const char *phase = "sequential";
	struct guest_record r;
	guest_phase(phase);
	if (bytes == 0)
		return;
	double t0 = guest_now();
	for (size_t off = 0; off + block <= bytes; off += block) {
		if (pread(fd, buf, block, off) != (ssize_t)block)
			guest_fail(NAME, 1, "a sequential O_DIRECT read failed");
	}
	double took = guest_now() - t0;
	guest_record_begin(&r, NAME, phase);
	guest_record_int(&r, "mib", bytes / MIB);
	guest_record_num(&r, "seconds", took);
	guest_record_num(&r, "mib_per_s", took > 0 ? bytes / (double)MIB / took : 0);
	guest_record_end(&r);
}

/* The first swap area's device, from /proc/swaps (NULL if none). */
static const char *swap_device(void)
{
	static char dev[256];
	char line[512];
	FILE *f = fopen("/proc/swaps", "r");
	const char *found = NULL;
	if (f && fgets(line, sizeof(line), f) && fgets(line, sizeof(line), f) &&
	    sscanf(line, "%255s", dev) == 1)
		found = dev;
	if (f)
		fclose(f);
	return found;
}

/* The sequential write goes to the swap device, raw, past its first MiB (the swap
 * header stays): through ext4 the filesystem's own writes break the stream (16 of 144
 * commands went elsewhere: 54 MiB/s where the drive streams 136). Swap is off for it
 * and on again after; nothing is in swap yet. Made durable by one fdatasync. */
static void raw_sequential_write(char *buf, size_t block, size_t bytes)
{
	struct guest_record r;
	guest_phase("sequential-write");
	if (bytes == 0)
		return;
	if (guest_backend() == BACKEND_NATIVE)
		guest_fail(NAME, 2, "--seq-write-mib writes a swap device raw: only in a guest "
			   "(gem5 or QEMU), never natively");
	const char *dev = swap_device();
	if (!dev || swapoff(dev) != 0)
		guest_fail(NAME, 1, "no swap device to write raw (or swapoff failed)");
	int fd = open(dev, O_WRONLY | O_DIRECT);
	if (fd < 0)
		guest_fail(NAME, 1, "cannot open the swap device '%s' for O_DIRECT writes", dev);
	double t0 = guest_now();
	for (size_t off = 0; off + block <= bytes; off += block)
		if (pwrite(fd, buf, block, (off_t)MIB + off) != (ssize_t)block)
			guest_fail(NAME, 1, "a sequential O_DIRECT write of '%s' failed", dev);
	if (fdatasync(fd) != 0)
		guest_fail(NAME, 1, "fdatasync of '%s' failed", dev);
	double took = guest_now() - t0;
	close(fd);
	if (swapon(dev, 0) != 0)
		guest_fail(NAME, 1, "swapon '%s' failed after the raw write", dev);
	guest_record_begin(&r, NAME, "sequential-write");
	guest_record_str(&r, "device", dev);
	guest_record_int(&r, "mib", bytes / MIB);
	guest_record_num(&r, "seconds", took);
	guest_record_num(&r, "mib_per_s", took > 0 ? bytes / (double)MIB / took : 0);
	guest_record_end(&r);
}

/* Touch `bytes` of anonymous memory (it fits: nothing is swapped yet), then page it
 * all out with MADV_PAGEOUT and wait until no page is under writeback: the swap-out
 * of anonymous pages scattered in physical memory, timed without the touching or
 * reclaim's scanning. pswpout says how much went. Returns the mapping (NULL: none). */
static char *swap_out(size_t bytes)
{
	struct guest_record r;
	struct wl_vm before, after;
	guest_phase("swap-out");
	if (bytes == 0)
		return NULL;
	if (bytes > wl_meminfo("MemAvailable") / 4 * 3)
		guest_fail(NAME, 2, "--swap-out-mib=%zu does not fit in three quarters of "
			   "MemAvailable (%zu MiB)", bytes / MIB, wl_meminfo("MemAvailable") / MIB);
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		guest_fail(NAME, 1, "cannot map %zu MiB", bytes / MIB);
	wl_dirty_pages(p, bytes, 1);
	wl_vm_read(&before);
	double t0 = guest_now();
	if (madvise(p, bytes, MADV_PAGEOUT) != 0)
		guest_fail(NAME, 1, "madvise(MADV_PAGEOUT) failed");
	while (wl_meminfo("Writeback") > 0)
		usleep(100);
	double took = guest_now() - t0;
	wl_vm_read(&after);
	guest_record_begin(&r, NAME, "swap-out");
	guest_record_int(&r, "paged_mib", bytes / MIB);
	guest_record_num(&r, "seconds", took);
	guest_record_num(&r, "swapped_mib", (after.pswpout - before.pswpout) * (double)PAGE / MIB);
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);
	return p;
}

/* Read one word of every page swap_out() paged out, in a random order: what a program
 * pays to get its anonymous memory back from swap, the cost a report sets beside a
 * file page's refault (the random 4 KiB read). The order defeats the swap slots'
 * sequence, as reclaim's swap-ins do; swap readahead still brings neighbours in with a
 * fault, which is the device's and kernel's real answer. pswpin and the major faults
 * say how many reads that took. Every page must read back what swap_out() wrote in it
 * (its first word, 1 + its offset): a device that loses or misplaces data fails here. */
static void swap_in(char *p, size_t bytes, uint64_t *seed)
{
	struct guest_record r;
	struct wl_vm before, after;
	guest_phase("swap-in");
	if (p == NULL)
		return;
	size_t pages = bytes / PAGE;
	size_t *order = malloc(pages * sizeof(*order));
	if (order == NULL)
		guest_fail(NAME, 1, "cannot allocate the swap-in order");
	for (size_t i = 0; i < pages; i++)
		order[i] = i;
	for (size_t i = pages - 1; i > 0; i--) {  /* Fisher-Yates */
		size_t j = wl_rand(seed) % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	/* Written out, the pages stay in memory as clean swap cache, unmapped, and a touch
	 * would find them there. Mapping them again by reading (which keeps each clean, its
	 * swap slot kept) and paging them out once more frees them with no new write, so
	 * each touch below reads from the device. */
	(void)wl_read_pages(p, bytes);
	if (madvise(p, bytes, MADV_PAGEOUT) != 0)
		guest_fail(NAME, 1, "madvise(MADV_PAGEOUT) failed");
	while (wl_meminfo("Writeback") > 0)
		usleep(100);
	size_t wrong = 0, first_wrong = 0;
	wl_vm_read(&before);
	double t0 = guest_now();
	for (size_t i = 0; i < pages; i++) {
		size_t off = order[i] * PAGE;
		if (*(volatile uint64_t *)(p + off) != 1 + off && wrong++ == 0)
			first_wrong = off;
	}
	double took = guest_now() - t0;
	wl_vm_read(&after);
	if (wrong)
		guest_fail(NAME, 1, "swap-in: %zu of %zu pages read back other data than was "
			   "swapped out (the first at offset %zu)", wrong, pages, first_wrong);
	guest_record_begin(&r, NAME, "swap-in");
	guest_record_int(&r, "pages", pages);
	guest_record_num(&r, "seconds", took);
	guest_record_num(&r, "swapped_in_mib", (after.pswpin - before.pswpin) * (double)PAGE / MIB);
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);
	free(order);
	munmap(p, bytes);
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	const char *path = wl_str(opts, "file");
	int writes = wl_int(opts, "random-writes") || wl_int(opts, "seq-write-mib");
	int fd = open(path, (writes ? O_RDWR | O_DSYNC : O_RDONLY) | O_DIRECT);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		guest_fail(NAME, 2, "cannot open '%s' with O_DIRECT", path);
	size_t block = wl_int(opts, "seq-block-kib") * 1024;
	size_t seq = wl_int(opts, "seq-mib") * MIB, seq_write = wl_int(opts, "seq-write-mib") * MIB;
	if ((size_t)st.st_size < seq || (size_t)st.st_size < seq_write || (size_t)st.st_size < block)
		guest_fail(NAME, 2, "'%s' (%lld MiB) is smaller than --seq-mib, --seq-write-mib "
			   "or a block", path, (long long)st.st_size / (long long)MIB);
	char *buf;
	if (posix_memalign((void **)&buf, PAGE, block))
		guest_fail(NAME, 1, "cannot allocate a buffer");
	wl_dirty_pages(buf, block, 0);
	uint64_t seed = wl_int(opts, "seed");
	size_t pages = st.st_size / PAGE;

	random_io("random", fd, buf, wl_int(opts, "random-reads"), pages, &seed, 0);
	sequential_read(fd, buf, block, seq);
	random_io("random-write", fd, buf, wl_int(opts, "random-writes"), pages, &seed, 1);
	close(fd);
	raw_sequential_write(buf, block, seq_write);
	size_t swapped = wl_int(opts, "swap-out-mib") * MIB;
	swap_in(swap_out(swapped), swapped, &seed);
	return 0;
}
