/* perturb SEED [PIDFILE]: a small difference in the state reclaim meets, decided by the
 * run's seed, so that repetitions of a point differ on gem5 as real machines do (gem5
 * is deterministic: without this a repetition repeats bit for bit). In order:
 *   - waits 0-50 ms (the job starts at another moment of the kernel's timers),
 *   - reads 0-2% of memory from a random place of the root filesystem's block device
 *     into the page cache (whichever it is: sda, sda1, nvme0n1p1, vda),
 *   - leaves a child holding 0-2% of memory in touched anonymous pages until the job
 *     ends (runjob kills the pid written to PIDFILE).
 * Prints one record (kind "perturb") saying what it did. SEED 0: nothing at all. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "guest.h"
#include "wl.h"

#define NAME "perturb"

/* The block device holding "/", as /dev/NAME, found from the root's device number
 * through sysfs (the guest has devtmpfs but no udev, so no /dev/block links). A fixed
 * name would read nothing on a profile whose root is elsewhere, silently. */
static void root_device(char *path, size_t size)
{
	struct stat root;
	if (stat("/", &root) != 0)
		guest_fail(NAME, 1, "cannot stat /");
	char uevent[64];
	snprintf(uevent, sizeof(uevent), "/sys/dev/block/%u:%u/uevent",
		 major(root.st_dev), minor(root.st_dev));
	FILE *f = fopen(uevent, "r");
	if (!f)
		guest_fail(NAME, 1, "the root filesystem (device %u:%u) is on no block device "
			   "(%s cannot be read)", major(root.st_dev), minor(root.st_dev), uevent);
	char line[128];
	path[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "DEVNAME=", 8) == 0) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, size, "/dev/%.*s", (int)(size - 6), line + 8);
		}
	fclose(f);
	if (!path[0])
		guest_fail(NAME, 1, "%s names no DEVNAME", uevent);
}

static double fraction(uint64_t *state) { return (wl_rand(state) >> 11) * 0x1.0p-53; }

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: perturb SEED [PIDFILE]\n");
		return 2;
	}
	char *end;
	unsigned long long seed = strtoull(argv[1], &end, 10);
	if (*end || end == argv[1])
		guest_fail(NAME, 2, "SEED must be a whole number, not '%s'", argv[1]);
	struct guest_record r;
	if (seed == 0) {
		guest_record_begin(&r, NAME, "perturb");
		guest_record_int(&r, "seed", 0);
		guest_record_end(&r);
		return 0;
	}
	uint64_t state = seed;
	size_t memory = wl_memtotal();
	double delay_ms = 50 * fraction(&state);
	size_t file = (size_t)(0.02 * fraction(&state) * memory) / PAGE * PAGE;
	size_t anon = (size_t)(0.02 * fraction(&state) * memory) / PAGE * PAGE;
	usleep((useconds_t)(delay_ms * 1000));

	char disk_path[96];
	root_device(disk_path, sizeof(disk_path));
	int fd = open(disk_path, O_RDONLY);
	if (fd < 0)
		guest_fail(NAME, 1, "cannot open the root device %s", disk_path);
	off_t disk = lseek(fd, 0, SEEK_END);
	size_t cached = 0;
	if (disk > (off_t)file && file > 0) {
		off_t at = (off_t)((disk - (off_t)file) * fraction(&state)) / PAGE * PAGE;
		char *buf = malloc(1 << 20);
		while (buf && cached < file) {
			size_t want = file - cached < (1 << 20) ? file - cached : (1 << 20);
			ssize_t got = pread(fd, buf, want, at + (off_t)cached);
			if (got <= 0)
				break;
			cached += got;
		}
		free(buf);
	}
	close(fd);

	pid_t holder = 0;
	int ready[2];
	if (anon > 0 && pipe(ready) == 0) {
		holder = fork();
		if (holder == 0) {
			char *p = mmap(NULL, anon, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p != MAP_FAILED)
				wl_dirty_pages(p, anon, seed);
			if (write(ready[1], "", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		char byte;
		/* The job starts once the memory is held, not while it is being touched. */
		if (holder < 0 || read(ready[0], &byte, 1) != 1)
			guest_fail(NAME, 1, "the child holding %zu KiB did not start", anon / 1024);
		if (argc == 3) {
			FILE *f = fopen(argv[2], "w");
			if (f) {
				fprintf(f, "%d\n", (int)holder);
				fclose(f);
			}
		}
	}
	guest_record_begin(&r, NAME, "perturb");
	guest_record_int(&r, "seed", (long long)seed);
	guest_record_num(&r, "delay_ms", delay_ms);
	guest_record_str(&r, "device", disk_path + 5);
	guest_record_int(&r, "file_kib", (long long)(cached / 1024));
	guest_record_int(&r, "anon_kib", (long long)(anon / 1024));
	guest_record_end(&r);
	return 0;
}
