/* Dirty N anonymous pages, then hand them back with MADV_FREE.
 * Used by the kernel test: vm.madv_free decides whether pglazyfree counts them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 0;
	size_t len = (size_t)pages * 4096;

	if (pages <= 0) {
		fprintf(stderr, "usage: madvfree PAGES (PAGES > 0)\n");
		return 2;
	}
	char *area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(area, 0x5a, len);
	if (madvise(area, len, MADV_FREE) != 0) {
		perror("madvise(MADV_FREE)");
		return 1;
	}
	return 0;
}
