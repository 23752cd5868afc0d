/* Map FILE with PROT_EXEC (as a program's text is mapped) and read one byte of every
 * page: once, or again every PERIOD_MS until SECONDS have passed. Used by the kernel
 * test to give reclaim referenced executable file pages to find.
 *   exectouch FILE once                 touch each page once, then hold the mapping
 *                                       until killed
 *   exectouch FILE PERIOD_MS SECONDS    touch every page each period, then exit */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static unsigned long touch(volatile const char *area, size_t length)
{
	unsigned long sum = 0;
	for (size_t offset = 0; offset < length; offset += 4096)
		sum += area[offset];
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: exectouch FILE once | exectouch FILE PERIOD_MS SECONDS\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(argv[1]);
		return 1;
	}
	const char *area = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (area == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	unsigned long sum = touch(area, st.st_size);
	if (strcmp(argv[2], "once") == 0) {
		printf("touched %ld pages once (%lu)\n", (long)(st.st_size / 4096), sum & 1);
		fflush(stdout);
		for (;;)
			pause();
	}
	long period_ms = atol(argv[2]), seconds = atol(argv[3]);
	if (period_ms <= 0 || seconds <= 0) {
		fprintf(stderr, "PERIOD_MS and SECONDS must be > 0\n");
		return 2;
	}
	struct timespec start, now, pause_for = {period_ms / 1000, (period_ms % 1000) * 1000000L};
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		nanosleep(&pause_for, NULL);
		sum += touch(area, st.st_size);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < seconds);
	printf("touched every %ld ms for %ld s (%lu)\n", period_ms, seconds, sum & 1);
	return 0;
}
